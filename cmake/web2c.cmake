# Turns the files of daemon/web into C: run with cmake -P, with
#   DIR    the folder of the files
#   OUT    the C file to write
#   FILES  name=file,... : each file becomes `const char tally_web_<name>[]`
#          (daemon/web.h), its bytes and a NUL.
set(text "/* Generated from daemon/web by cmake/web2c.cmake: do not edit. */\n")
string(APPEND text "#include \"daemon/web.h\"\n\n")
string(REPLACE "," ";" FILES "${FILES}")
foreach(entry ${FILES})
  string(REPLACE "=" ";" parts "${entry}")
  list(GET parts 0 name)
  list(GET parts 1 file)
  file(READ "${DIR}/${file}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "((0x..,){40})" "\\1\n  " bytes "${bytes}")
  string(APPEND text "const char tally_web_${name}[] = {\n  ${bytes}0x00};\n")
endforeach()
file(WRITE "${OUT}.tmp" "${text}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp"
                "${OUT}")
file(REMOVE "${OUT}.tmp")
