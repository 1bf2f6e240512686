# Turns the Lua scripts of redis/lua into C: run with cmake -P, with
#   DIR      the folder of the .lua files
#   OUT      the C file to write (byte arrays, one per script)
#   LUA_OUT  a folder to write each whole script to, for luacheck
#   SCRIPTS  name=piece+piece+...,... : each script is its pieces joined,
#            in order (a piece is a file DIR/<piece>.lua)
# Each script becomes `const char tally_lua_<name>[]` (redis/scripts.h),
# its bytes and a NUL, so that a script is exactly the text of its files.
set(text "/* Generated from redis/lua by cmake/lua2c.cmake: do not edit. */\n")
string(APPEND text "#include \"redis/scripts.h\"\n\n")
string(REPLACE "," ";" SCRIPTS "${SCRIPTS}")
file(MAKE_DIRECTORY "${LUA_OUT}")
foreach(script ${SCRIPTS})
  string(REPLACE "=" ";" parts "${script}")
  list(GET parts 0 name)
  list(GET parts 1 pieces)
  string(REPLACE "+" ";" pieces "${pieces}")
  set(whole "")
  set(hex "")
  foreach(piece ${pieces})
    file(READ "${DIR}/${piece}.lua" body)
    string(APPEND whole "${body}")
    file(READ "${DIR}/${piece}.lua" h HEX)
    string(APPEND hex "${h}")
  endforeach()
  file(WRITE "${LUA_OUT}/${name}.lua" "${whole}")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  # Forty bytes to a line.
  string(REGEX REPLACE "((0x..,){40})" "\\1\n  " bytes "${bytes}")
  string(APPEND text "const char tally_lua_${name}[] = {\n  ${bytes}0x00};\n")
endforeach()
file(WRITE "${OUT}.tmp" "${text}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp"
                "${OUT}")
file(REMOVE "${OUT}.tmp")
