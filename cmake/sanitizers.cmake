# TOAST_SANITIZE=ON builds everything with ASan + UBSan (a debugging aid; CI builds without it for speed, and
# scripts/test --sanitize runs the whole suite in such a build). Undefined behaviour aborts instead of printing
# and carrying on, so a test that hits it fails rather than passing with a line in its log.
if(TOAST_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
endif()
