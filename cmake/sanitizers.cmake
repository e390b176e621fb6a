# TOAST_SANITIZE=ON builds everything with ASan + UBSan (a debugging aid; CI builds without it for speed).
if(TOAST_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
