# Writes a linker script making PMPI_<name> an alias of MPI_<name> for every
# function in include/mpi.h's PMPI list (the profiling interface).
#   cmake -DIN=include/mpi.h -DOUT=pmpi.ld -P pmpi-ld.cmake
file(READ ${IN} header)
string(REGEX MATCH "BEGIN PMPI LIST.*END PMPI LIST" block "${header}")
string(REGEX MATCHALL "X\\([A-Za-z0-9_]+\\)" items "${block}")
set(script "/* generated from ${IN} by pmpi-ld.cmake */\n")
foreach(item IN LISTS items)
  string(REGEX REPLACE "X\\(([A-Za-z0-9_]+)\\)" "\\1" name "${item}")
  string(APPEND script "PMPI_${name} = MPI_${name};\n")
endforeach()
file(WRITE ${OUT} "${script}")
