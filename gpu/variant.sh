#!/usr/bin/env bash
# Prepares carry-NAME/: the current tree's smla and libsmla, beside carry/ (gpu/carry.sh), so
# that one GPU round can time kernel-source variants against each other (gpu/ab.sh).
# Edit the templates, run this with a name, repeat; pass carry and every carry-NAME in `carry`.
set -eu
cd "$(dirname "$0")/.."
name=${1:?usage: gpu/variant.sh NAME}
cmake --build build --target smla_cli smla
rm -rf "carry-$name" && mkdir "carry-$name"
cp build/smla "carry-$name/"
cp -P build/libsmla.so* "carry-$name/"
du -sh "carry-$name"
