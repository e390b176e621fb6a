# libtorrent adapters and the toast-client executable: see client/CMakeLists.txt
