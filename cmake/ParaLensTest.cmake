# SPDX-License-Identifier: GPL-3.0-or-later
# paralens_add_test(NAME SOURCES... LIBS... LABELS...)
# One helper adds a Qt Test (or plain) executable, links it and registers it with ctest.
function(paralens_add_test name)
    cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS" ${ARGN})
    add_executable(${name} ${T_SOURCES})
    target_link_libraries(${name} PRIVATE ${T_LIBS} paralens_warnings)
    target_compile_definitions(${name} PRIVATE
        PARALENS_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
        PARALENS_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared")
    add_test(NAME ${name} COMMAND ${name})
    set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}"
                         ENVIRONMENT "QT_QPA_PLATFORM=offscreen" TIMEOUT 300)
endfunction()
