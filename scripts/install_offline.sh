#!/usr/bin/env bash
# Install the pipeline on a machine without internet from a wheelhouse (scripts/wheelhouse.py).
#
#   scripts/install_offline.sh WHEELHOUSE [VENV]        # default VENV: .venv
#
# The venv sees the packages of PYTHON's environment (a .pth file naming its site-packages, which
# works for a venv's Python too, where --system-site-packages would show the base Python's): torch
# is the node's CUDA build and is never replaced (a constraint pins it at the version found). fairseq-fixed is installed from
# its wheel in the wheelhouse, or compiled here from its source against that torch (no index either
# way). PYTHON names the interpreter (default python3); it must import torch.
set -euo pipefail
cd "$(dirname "$0")/.."
wh=$(cd "${1:?usage: install_offline.sh WHEELHOUSE [VENV]}" && pwd)
venv=${2:-.venv}
py=${PYTHON:-python3}
[[ -f "$wh/requirements.txt" ]] || { echo "install_offline: $wh/requirements.txt missing: not a wheelhouse" >&2; exit 2; }
torch_version=$("$py" -c 'import torch; print(torch.__version__)') || {
  echo "install_offline: $py cannot import torch: install the node's CUDA build of torch first" >&2; exit 2; }
[[ -x "$venv/bin/python" ]] || "$py" -m venv "$venv"
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$py" -c 'import site; print("\n".join(site.getsitepackages()))' > "$site/_node_packages.pth"
pip=("$venv/bin/python" -m pip)
# nothing but the wheelhouse, whatever pip's configuration and environment say
for var in $(compgen -e | grep '^PIP_' || true); do unset "$var"; done
export PIP_CONFIG_FILE=/dev/null
# torch stays the node's
constraints=$(mktemp)
trap 'rm -f "$constraints"' EXIT
echo "torch==${torch_version}" > "$constraints"
offline=(--no-index --find-links "$wh" --constraint "$constraints" --no-cache-dir)
# --no-build-isolation: a package carried as source (compiled here) builds with the venv's and the
# node's build tools, as an isolated build would need them as wheels
"${pip[@]}" install -q "${offline[@]}" --no-build-isolation -r "$wh/requirements.txt"
if ! "$venv/bin/python" -c 'import fairseq' 2>/dev/null && compgen -G "$wh/fairseq[-_]fixed*" >/dev/null; then
  # its wheel when the wheelhouse has one, else its source compiled by this Python against this torch;
  # --no-deps: its metadata asks for torchaudio, which the text paths never import
  "${pip[@]}" install -q "${offline[@]}" --no-build-isolation --no-deps fairseq-fixed
fi
# the package itself (its own pins name the dev machine's torch; the node's is used)
"${pip[@]}" install -q --no-index --no-deps --no-build-isolation -e .
# the stamp scripts/bootstrap.sh looks for: `make ... VENV=<venv>` then uses this venv as it is
touch "$venv/.xling-installed"
"$venv/bin/python" - <<PY
import torch
assert torch.__version__ == "${torch_version}", f"torch was replaced: {torch.__version__}"
import xling
print(f"installed offline: xling in $venv with the node's torch {torch.__version__}"
      f" (CUDA {'available' if torch.cuda.is_available() else 'not available'})")
PY
