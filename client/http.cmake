# Local playback endpoint (issue 5): see client/CMakeLists.txt
