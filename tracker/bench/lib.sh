# Shared by the tracker's benchmark scripts (sourced, not run): building the tracker and the load generator,
# free ports, waiting for a listener, reading the load generator's fields, medians.

# build_tracker_bench ROOT BUILD_DIR: configures BUILD_DIR if needed, builds toast-tracker and tracker_load_gen,
# and sets TRACKER and LOADGEN.
build_tracker_bench() {
  local root=$1 build_dir=$2
  if [[ ! -f "$build_dir/build.ninja" && ! -f "$build_dir/Makefile" ]]; then
    cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  cmake --build "$build_dir" -j1 --target toast-tracker tracker_load_gen >/dev/null
  TRACKER="$build_dir/tracker/toast-tracker"
  LOADGEN="$build_dir/tracker/tracker_load_gen"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_port() {  # wait_port PORT: until something listens on 127.0.0.1:PORT (5 s at most)
  for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  return 1
}

field() {  # field NAME LINE: the value of NAME=... in the load generator's line
  sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"
}

median() {  # the median of the numbers on stdin, one per line
  sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else printf "%.3f\n", (v[NR/2]+v[NR/2+1])/2}'
}
