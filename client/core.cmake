# Pure client core: see client/CMakeLists.txt
