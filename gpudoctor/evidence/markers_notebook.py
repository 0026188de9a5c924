"""What a notebook platform leaves in the environment and on disk (Colab, Kaggle, Gradient, SageMaker ...).

Evidence only: the names to record.  What each marker means, and the platform's own fix, live in the knowledge
base (``gpudoctor.kb.notebook_platforms``); a test proves every marker the knowledge base reads is recorded here.
Values are recorded only for names that hold no secret; tokens are recorded by presence alone.
"""

from __future__ import annotations

# Recorded with their values (none of them a credential).
ENV_VALUES: tuple[str, ...] = (
    "COLAB_RELEASE_TAG",
    "COLAB_GPU",
    "COLAB_TPU_ADDR",
    "KAGGLE_KERNEL_RUN_TYPE",
    "KAGGLE_CONTAINER_NAME",
    "PAPERSPACE_NOTEBOOK_REPO_ID",
    "PAPERSPACE_CLUSTER_ID",
    "SAGEMAKER_SPACE_NAME",
    "SAGEMAKER_APP_TYPE",
    "DATABRICKS_RUNTIME_VERSION",
)
# Recorded by presence only.
ENV_PRESENCE: tuple[str, ...] = (
    "KAGGLE_URL_BASE",
    "KAGGLE_DATA_PROXY_TOKEN",
    "AZUREML_RUN_ID",
    "LIGHTNING_CLOUDSPACE_HOST",
)
# Paths whose existence is recorded (never their contents).
FILES_EXIST: tuple[str, ...] = (
    "/content",
    "/kaggle",
    "/notebooks",
    "/opt/ml/metadata/resource-metadata.json",
)
# Small files whose text is recorded (capped): they name the platform and hold no secret.
FILES_READ: tuple[str, ...] = ()
