# SPDX-License-Identifier: GPL-3.0-or-later
# paralens_add_test(NAME SOURCES... LIBS... [RUNS_PARALENS] [RUNS_MEASURE] [NEEDS_GPU]
#                   [LABELS extra...])
# One helper adds a Qt Test (or plain) executable, links it and registers it with ctest.
#   RUNS_PARALENS  the suite runs the built `paralens` (through tests/app/cli_runner.h, which
#                  reads PARALENS_BIN); it is built first.
#   RUNS_MEASURE   the suite runs paralens-measure (PARALENS_MEASURE_EXE) where it is built.
#   NEEDS_GPU      the suite needs a CUDA device.
#   LABELS         labels on top of the folder's one, e.g. `extended`.
# The label follows the rule in tests/CMakeLists.txt: the folder's name, `cli` for a suite in
# tests/app that runs paralens, `gpu` for one that needs a GPU.
function(paralens_add_test name)
    cmake_parse_arguments(T "RUNS_PARALENS;RUNS_MEASURE;NEEDS_GPU" "" "SOURCES;LIBS;LABELS"
                          ${ARGN})
    add_executable(${name} ${T_SOURCES})
    target_link_libraries(${name} PRIVATE ${T_LIBS} paralens_warnings)
    target_compile_definitions(${name} PRIVATE
        PARALENS_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
        PARALENS_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared")

    get_filename_component(_label "${CMAKE_CURRENT_SOURCE_DIR}" NAME)
    if(T_RUNS_PARALENS)
        if(NOT _label STREQUAL "app")
            message(FATAL_ERROR "${name}: suites that run paralens live in tests/app")
        endif()
        set(_label cli)
        target_compile_definitions(${name} PRIVATE PARALENS_BIN="$<TARGET_FILE:paralens>")
        add_dependencies(${name} paralens)
    endif()
    if(T_RUNS_MEASURE AND TARGET paralens-measure)
        target_compile_definitions(${name} PRIVATE
            PARALENS_MEASURE_EXE="$<TARGET_FILE:paralens-measure>")
        add_dependencies(${name} paralens-measure)
    endif()
    if(T_NEEDS_GPU)
        set(_label gpu)
    endif()
    set(_labels ${_label} ${T_LABELS})
    list(REMOVE_DUPLICATES _labels)

    add_test(NAME ${name} COMMAND ${name})
    # Qt's offscreen platform for every suite, however ctest is started (here and only here).
    set_tests_properties(${name} PROPERTIES LABELS "${_labels}"
                         ENVIRONMENT "QT_QPA_PLATFORM=offscreen" TIMEOUT 300)
endfunction()
