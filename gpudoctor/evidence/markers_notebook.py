"""What a notebook platform leaves in the environment and on disk (Colab, Kaggle, Gradient, SageMaker ...).

Evidence only: the names to record.  What each marker means, and the platform's own fix, live in the knowledge
base (``gpudoctor.kb.notebook_platforms``, whose rows cite the public code that tests each name); a test proves
every marker the knowledge base reads is recorded here (the evidence layer may not import the knowledge base, so
the names are kept here and checked against it, not derived from it).  Values are recorded only for names that
hold no secret; the rest by presence alone.
"""

from __future__ import annotations

# Recorded with their values (none of them a credential).
ENV_VALUES: tuple[str, ...] = (
    "COLAB_RELEASE_TAG",  # Colab's runtime release
    "COLAB_GPU",  # "1" on a GPU runtime, "0" or empty without one
    "COLAB_TPU_ADDR",  # the TPU's address on a (legacy) TPU runtime
    "VERTEX_PRODUCT",  # "COLAB_ENTERPRISE" or "WORKBENCH_INSTANCE"
    "KAGGLE_KERNEL_RUN_TYPE",  # "Interactive" or "Batch"
    "PAPERSPACE_NOTEBOOK_REPO_ID",
    "SAGEMAKER_APP_TYPE",  # "JupyterLab", "CodeEditor" ...
    "DATABRICKS_RUNTIME_VERSION",  # "15.4", "client.1.13" (serverless)
)
# Recorded by presence only: endpoints and host names that say where the notebook runs, nothing more is needed.
ENV_PRESENCE: tuple[str, ...] = (
    "KAGGLE_DATA_PROXY_URL",
    "LIGHTNING_CLOUDSPACE_HOST",
)
# Paths whose existence is recorded (never their contents: SageMaker's metadata names the account's resources).
FILES_EXIST: tuple[str, ...] = (
    "/opt/ml/metadata/resource-metadata.json",
    "/databricks/DBR_VERSION",
)
# Small files whose text is recorded (capped): they name the platform and hold no secret.
FILES_READ: tuple[str, ...] = ()
