#!/usr/bin/env bash
# Unpack Debian's Boost 1.81 into a private prefix (it cannot be installed
# beside the system's 1.74) and print the cmake arguments that select it,
# one per line on stdout; progress goes to stderr.
# Usage: scripts/boost181.sh [PREFIX]    PREFIX defaults to .deps/boost-1.81
# Does nothing but print when PREFIX already holds it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prefix=${1:-$root/.deps/boost-1.81}
[[ "$prefix" = /* ]] || prefix="$PWD/$prefix"
prefix=${prefix%/}

# The multiarch triplet names the lib dir (x86_64-linux-gnu on amd64).
if command -v dpkg-architecture >/dev/null; then
  multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
else
  multiarch=$(gcc -print-multiarch)
fi
libdir=$prefix/usr/lib/$multiarch
cmake_dir=$libdir/cmake/Boost-1.81.0

# libboost1.81-dev holds the headers and the Boost and boost_headers configs;
# the other two add boost_system's config and library (apt-cache depends
# names nothing else).
packages=(libboost1.81-dev libboost-system1.81-dev libboost-system1.81.0)

if [[ ! -d "$cmake_dir" ]]; then
  echo "boost181.sh: unpacking ${packages[*]} into $prefix" >&2
  mkdir -p "$(dirname "$prefix")"
  # Unpack beside PREFIX and move it in at the end, so that an interrupted
  # run never leaves a PREFIX that looks complete.
  staging=$(mktemp -d "$prefix.partial.XXXXXX")
  trap 'rm -rf -- "$staging"' EXIT
  mkdir "$staging/debs" "$staging/root"

  apt_opts=()
  sudo=()
  if ((EUID == 0)); then
    # apt's _apt user cannot write into our 0700 dir; say so rather than
    # let apt warn that it falls back to root.
    apt_opts=(-o APT::Sandbox::User=root)
  else
    sudo=(sudo)
  fi
  download() {
    (cd "$staging/debs" && apt-get download -qq "${apt_opts[@]}" "${packages[@]}")
  }
  # Package lists may be missing or stale (a fresh container has none); only
  # then is the update, which needs root, worth its time. The first try's
  # "Unable to locate package" errors are expected then, hence silenced.
  if ! download 2>/dev/null; then
    echo "boost181.sh: apt-get download failed; updating the package lists" >&2
    "${sudo[@]}" apt-get update -qq
    download
  fi

  for deb in "$staging"/debs/*.deb; do
    dpkg -x "$deb" "$staging/root"
  done
  [[ -d "$staging/root/usr/lib/$multiarch/cmake/Boost-1.81.0" ]] || {
    echo "boost181.sh: the packages hold no $multiarch/cmake/Boost-1.81.0" >&2
    exit 1
  }

  # Another run may have finished first; an empty PREFIX is just a mkdir.
  if [[ ! -d "$cmake_dir" ]]; then
    rmdir -- "$prefix" 2>/dev/null || true
    if [[ -e "$prefix" ]]; then
      cp -a -- "$staging/root/." "$prefix/"
    else
      mv -T -- "$staging/root" "$prefix"
    fi
  fi
fi

printf '%s\n' \
  "-DBoost_DIR=$cmake_dir" \
  "-DBoost_NO_SYSTEM_PATHS=ON" \
  "-DCMAKE_BUILD_RPATH=$libdir" \
  "-DCMAKE_INSTALL_RPATH=$libdir"
