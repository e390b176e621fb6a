# Sourced by the install check. overlay_root WORK_DIR mounts at WORK_DIR/root a throwaway copy-on-write view
# of this machine's root (an overlay whose upper layer is a tmpfs on WORK_DIR) and sets $root. Call it only
# inside private mount and PID namespaces (unshare --mount --pid --fork): every mount, and everything written
# below $root, vanishes with them. Nothing inside can change the host: /dev is a tmpfs holding bind mounts of
# the few device nodes programs use (a bind-mounted node cannot be removed or replaced), /proc/sys and /sys
# are read-only, /run and /tmp are empty tmpfs (so maintainer scripts never reach the host's service manager).
# Returns 77 when overlayfs over / is not available here.
overlay_root() {
    local work=$1 node
    mount -t tmpfs -o size=1g toast-package-check "$work"
    mkdir "$work/upper" "$work/work" "$work/root"
    mount -t overlay overlay -o "lowerdir=/,upperdir=$work/upper,workdir=$work/work" "$work/root" 2>/dev/null ||
        return 77
    root=$work/root
    # Never run the package scripts anywhere but in the overlay.
    [ "$(findmnt -n -o FSTYPE --target "$root")" = overlay ] || { echo "overlay not mounted at $root"; return 1; }
    mount -t proc proc "$root/proc"
    mount --bind "$root/proc/sys" "$root/proc/sys"
    mount -o remount,bind,ro "$root/proc/sys"
    mount -t sysfs -o ro sysfs "$root/sys" 2>/dev/null || mount -t tmpfs -o ro tmpfs "$root/sys"
    mount -t tmpfs -o mode=0755,nosuid tmpfs "$root/dev"
    for node in null zero full random urandom tty; do
        touch "$root/dev/$node"
        mount --bind "/dev/$node" "$root/dev/$node"
    done
    mkdir "$root/dev/pts" "$root/dev/shm"
    ln -s /proc/self/fd "$root/dev/fd"
    mount -t tmpfs tmpfs "$root/run"
    mount -t tmpfs tmpfs "$root/tmp"
}
