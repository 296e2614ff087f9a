# Text helpers for coalesce's cmake -P scripts (tests/codegen, bench): tables for the terminal.

# pad(text width out_var): `text` followed by spaces to `width` characters, and at least one.
function(pad text width out_var)
  string(LENGTH "${text}" length)
  math(EXPR fill "${width} - ${length}")
  if(fill LESS 1)
    set(fill 1)
  endif()
  string(REPEAT " " ${fill} spaces)
  set(${out_var} "${text}${spaces}" PARENT_SCOPE)
endfunction()
