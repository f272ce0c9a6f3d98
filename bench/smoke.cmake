# cmake -DBENCH=/path/to/mem_bench -P smoke.cmake
# Passes if mem_bench exits 0 and prints the Markdown table.  Every strategy
# and kind of tracking, at the smallest and largest sbpage size: the sizes
# between take the same code, and the run stays a few seconds.
execute_process(COMMAND ${BENCH} --quick --size 16M -r 1 --sbpages 4K,1M
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mem_bench failed (${rc}):\n${err}")
endif()
if(NOT out MATCHES "\n\\| strategy \\| path \\| pl\\. \\|[^\n]*\n\\|---" OR NOT out MATCHES "\n\\| [a-z]+ \\| [a-z]+ \\| [IR] \\| [0-9]")
  message(FATAL_ERROR "mem_bench printed no result table:\n${out}\n${err}")
endif()
