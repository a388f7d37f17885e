#!/usr/bin/env bash
# The install as a host sees it: `cmake --install` into a scratch prefix; the example built from
# that prefix with find_package(smla) and with pkg-config, each run without LD_LIBRARY_PATH; the
# installed CLI runs; libsmla.so exports the C API and nothing else; the Python package installs
# with pip (into a scratch venv of Debian's python3, offline) and finds the library through the
# installed `smla` on PATH.
#   install_test.sh BUILD_DIR SOURCE_DIR CUDA_ROOT
set -euo pipefail
build=$1 source=$2 cuda=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
prefix=$scratch/prefix
unset LD_LIBRARY_PATH
export SMLA_CACHE=""  # kernels in memory only: nothing of the machine's cache is touched

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name libsmla.so | head -1)")
echo "installed: $(cd "$prefix" && find . -type f -o -type l | sort | tr '\n' ' ')"

exports=$(nm -D --defined-only "$libdir/libsmla.so" | awk '{print $3}')
others=$(grep -v '^smla_' <<<"$exports" || true)
if [[ -n "$others" ]]; then
  echo "libsmla.so exports more than the C API:" >&2
  echo "$others" >&2
  exit 1
fi
echo "libsmla.so exports $(wc -l <<<"$exports") symbols, all smla_*"

"$prefix/bin/smla" --version

cmake -S "$source/examples" -B "$scratch/examples" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCUDAToolkit_ROOT="$cuda" >/dev/null
cmake --build "$scratch/examples" >/dev/null
"$scratch/examples/decode_one_layer"

export PKG_CONFIG_PATH=$libdir/pkgconfig
cc -std=c99 -o "$scratch/decode_pc" "$source/examples/decode_one_layer.c" \
  $(pkg-config --cflags smla) -I"$cuda/include" $(pkg-config --libs smla) \
  -L"$cuda/lib64" -lcudart_static -ldl -lpthread -lrt
"$scratch/decode_pc"
echo "pkg-config: smla $(pkg-config --modversion smla)"

python=/usr/bin/python3
"$python" -m venv --system-site-packages "$scratch/venv"  # Debian's setuptools and wheel build it
"$scratch/venv/bin/pip" install --quiet --no-build-isolation --no-index "$prefix/share/smla/python"
PATH=$prefix/bin:$PATH "$scratch/venv/bin/python" -c "import smla; print('python: smla', smla.version())"
