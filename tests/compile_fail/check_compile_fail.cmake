# Builds one compile-fail case and checks what the user would see first:
#   - the build must fail;
#   - the first error line must match EXPECT (the documented message);
#   - and it must be the only error (ERRORS errors where the compiler itself repeats one mistake):
#     a misuse stops at its one readable line, without pages of follow-on errors from inside coalesce.
# Arguments: -DBUILD_DIR= -DTARGET= -DEXPECT=<regex> -DERRORS=<count> -DSOURCE=<case, for the messages>
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
  OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it must not:\n${out}")
endif()
# Error lines of g++ ("file:12:3: error: ..."), nvcc's front end ("file(12): error: ...") and
# #error; not the summaries ("1 error detected in the compilation of ...").
# Semicolons would split CMake lists: both sides spell them out.
string(REPLACE "\r" "" out "${out}")
string(REPLACE ";" "<semicolon>" out "${out}")
string(REPLACE "\\;" "<semicolon>" EXPECT "${EXPECT}")
string(REPLACE ";" "<semicolon>" EXPECT "${EXPECT}")
string(REPLACE "\n" ";" lines "${out}")
set(errors "")
foreach(line IN LISTS lines)
  if(line MATCHES "(^|[:)] )(fatal )?error( #[0-9]+-D)?: " AND NOT line MATCHES "errors? detected in the compilation")
    list(APPEND errors "${line}")
  endif()
endforeach()
list(LENGTH errors count)
if(count EQUAL 0)
  message(FATAL_ERROR "${SOURCE}: the build failed without a compiler error line:\n${out}")
endif()
list(GET errors 0 first)
if(NOT first MATCHES "${EXPECT}")
  message(FATAL_ERROR "${SOURCE}: the first error is not the documented one.\n  expected: ${EXPECT}\n  first:    ${first}\n\n${out}")
endif()
if(NOT count EQUAL ERRORS)
  string(REPLACE ";" "\n  " listed "${errors}")
  string(REPLACE "<semicolon>" ";" listed "${listed}")
  message(FATAL_ERROR "${SOURCE}: ${count} errors, ${ERRORS} allowed; a misuse must stop at its one message:\n  ${listed}")
endif()
string(REPLACE "<semicolon>" ";" first "${first}")
message(STATUS "${SOURCE}: ${count} error(s), as documented: ${first}")
