
# A venv with @@FRAMEWORK_LABEL@@, pinned, from the index the knowledge base chose.
readonly PYTHON_BIN=@@PYTHON@@
readonly PIP_REQUIREMENT=@@REQUIREMENT@@
readonly PIP_INDEX_DEFAULT=@@INDEX_URL@@
readonly IMPORT_NAME=@@IMPORT@@

step_python() {
  if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import ${IMPORT_NAME}" >/dev/null 2>&1; then
    skip python "${VENV} already has ${IMPORT_NAME}"
    return 0
  fi
  if ! confirm "Create ${VENV} with ${PIP_REQUIREMENT}?"; then
    skip python "declined"
    return 0
  fi
  if ! command -v "$PYTHON_BIN" >/dev/null 2>&1 || ! "$PYTHON_BIN" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    pkg_install @@PYTHON_PACKAGES@@
  fi
  if [ ! -x "$VENV/bin/python" ]; then
    run "$PYTHON_BIN" -m venv "$VENV"
  fi
  # GPUDOCTOR_PIP_INDEX_URL replaces the index (set but empty: pip's own configuration, e.g. a local mirror).
  local index=${GPUDOCTOR_PIP_INDEX_URL-$PIP_INDEX_DEFAULT}
  if [ -n "$index" ]; then
    run "$VENV/bin/python" -m pip install --index-url "$index" "$PIP_REQUIREMENT"
  else
    run "$VENV/bin/python" -m pip install "$PIP_REQUIREMENT"
  fi
  run "$VENV/bin/python" -c "import ${IMPORT_NAME}; print('${IMPORT_NAME}', ${IMPORT_NAME}.__version__)"
  DONE+=("python: ${PIP_REQUIREMENT} in ${VENV}")
}
