#!/usr/bin/env bash
# Runs the same Python SDK workload against Azurite (table emulator) and `strata serve`.
#
#   benches/emulator_compare.sh [--entities 20000] [--reads 4000] ...   (args go to emulator_compare.py)
#
# Installs what it needs into target/: the pinned SDK venv (target/sdk-venv, shared with
# tests/sdk_conformance.rs) and Azurite from npm (target/azurite); builds strata in release mode.
# Everything listens on 127.0.0.1 only and stops by itself.
set -euo pipefail
cd "$(dirname "$0")/.."

AZURITE_VERSION=3.37.0
venv=target/sdk-venv
if [[ ! -x $venv/bin/python ]] || ! cmp -s tests/sdk/requirements.txt $venv/strata-requirements.txt; then
    python3 -m venv $venv
    $venv/bin/python -m pip install --quiet --disable-pip-version-check -r tests/sdk/requirements.txt
    cp tests/sdk/requirements.txt $venv/strata-requirements.txt
fi
azurite=target/azurite/node_modules/.bin/azurite-table
if [[ ! -x $azurite ]] || [[ $(node -p "require('./target/azurite/node_modules/azurite/package.json').version") != "$AZURITE_VERSION" ]]; then
    mkdir -p target/azurite
    npm install --prefix target/azurite --no-audit --no-fund --silent "azurite@$AZURITE_VERSION"
fi
cargo build --release -j 2 --bin strata
exec $venv/bin/python benches/emulator_compare.py --strata target/release/strata --azurite $azurite "$@"
