#!/usr/bin/env bash
# Makes a minimal root filesystem for a test container image: bash, sh and the coreutils a
# far side needs (and an agent-exec binary when one is given), each with the libraries `ldd`
# names. No registry is reachable here, so images are made with `docker/podman import` from it.
#   make-rootfs.sh ROOTFS AGENT_EXEC_BINARY [libs-only]
# `libs-only` puts the binary's libraries there but not the binary (for `--install`).
set -euo pipefail
root=$1
binary=$2
libs_only=${3:-}
mkdir -p "$root"/{bin,usr/bin,usr/local/bin,lib,lib64,etc,tmp,root,proc,sys,dev}
chmod 1777 "$root/tmp"
copy_with_libs() {
    local file=$1
    mkdir -p "$root$(dirname "$file")"
    cp -L "$file" "$root$file"
    ldd "$file" 2>/dev/null | grep -o '/[^ ]*' | while read -r lib; do
        mkdir -p "$root$(dirname "$lib")"
        [ -e "$root$lib" ] || cp -L "$lib" "$root$lib"
    done
}
for tool in bash sh env sleep cat ls uname chmod mkdir rm echo true false pwd head tail wc seq grep tr id; do
    path=$(type -P "$tool")
    # Debian keeps them in /bin or /usr/bin; the image has both.
    copy_with_libs "$(readlink -f "$path")"
    name=$(basename "$path")
    target=$(readlink -f "$path")
    [ -e "$root/bin/$name" ] || ln -s "$target" "$root/bin/$name"
    [ -e "$root/usr/bin/$name" ] || ln -s "$target" "$root/usr/bin/$name"
done
copy_with_libs "$binary"
rm "$root$binary"
if [ "$libs_only" != libs-only ]; then
    cp "$binary" "$root/usr/local/bin/agent-exec"
fi
printf 'root:x:0:0:root:/root:/bin/bash\n' > "$root/etc/passwd"
printf 'root:x:0:\n' > "$root/etc/group"
