#!/usr/bin/env bash
# Build Citus from ../shared/vendor/citus/ against the PostgreSQL whose pg_config is first on PATH (or
# $PG_CONFIG), once per machine: the build tree lives in a cache outside the clone
# ($CITUS_CACHE, default /var/cache/rebuild-tracker), so a second clone or CI run only re-installs it
# (seconds). Installs into that PostgreSQL's lib and share directories (root, or the owner of them).
#
#   scripts/citus_build.sh              # Debian's PostgreSQL 15 → Citus 13.2.2 (+ the 15.20 patch)
#   PG_CONFIG=… scripts/citus_build.sh  # another PostgreSQL; 16–18 take Citus 14.0.1
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
vendor="${CITUS_VENDOR:-$here/../shared/vendor/citus}"
pg_config="${PG_CONFIG:-$(command -v pg_config || echo /usr/lib/postgresql/15/bin/pg_config)}"
pg_major="$("$pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')"
pg_full="$("$pg_config" --version | sed -E 's/^PostgreSQL ([0-9.]+).*/\1/')"
if [ "$pg_major" -ge 16 ]; then version=14.0.1; else version=13.2.2; fi

pkglibdir="$("$pg_config" --pkglibdir)"
if [ -f "$pkglibdir/citus.so" ] && [ "${CITUS_REBUILD:-0}" != 1 ]; then
  echo "Citus is installed in $pkglibdir (PostgreSQL $pg_full)."
  exit 0
fi

cache="${CITUS_CACHE:-/var/cache/rebuild-tracker}/citus-$version-pg$pg_full"
if [ ! -f "$cache/.built" ]; then
  echo "Building Citus $version against PostgreSQL $pg_full in $cache (10–15 minutes on 2 cores, once per machine)…"
  (cd "$vendor" && sha256sum --check --quiet --ignore-missing SHA256SUMS)
  rm -rf "$cache" && mkdir -p "$cache"
  tar -xzf "$vendor/citus-$version.tar.gz" -C "$cache" --strip-components=1
  # 15.20 exports have_createdb_privilege, which 13.2.2 also defines (see the vendor README).
  patch_file="$vendor/citus-$version-pg$pg_full.patch"
  if [ -f "$patch_file" ]; then (cd "$cache" && patch -p1 --quiet < "$patch_file"); fi
  (
    cd "$cache"
    PG_CONFIG="$pg_config" ./configure --quiet > configure.log 2>&1 || { tail -40 configure.log; exit 1; }
    # with_llvm=no: no LLVM bitcode for JIT inlining, which halves the build and is not used by tests.
    make -s -j"$(nproc)" with_llvm=no > make.log 2>&1 || { tail -40 make.log; exit 1; }
  )
  touch "$cache/.built"
fi
make -s -C "$cache" install with_llvm=no > "$cache/install.log" 2>&1 || { tail -40 "$cache/install.log"; exit 1; }
echo "Citus $version is installed in $pkglibdir (PostgreSQL $pg_full)."
