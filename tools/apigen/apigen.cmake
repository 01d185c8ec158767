# gvs_apigen(NAME API_FILE GEN_DIR [PARTS...]): generates NAME_ops.h,
# NAME_fe_gen.{h,c} and NAME_be_gen.{h,c} from API_FILE (and the .api
# files it includes, PARTS) into GEN_DIR with tools/apigen/gvs_apigen.py,
# and the target NAME_generated that depends on them, for the plugins'
# targets and those of other directories.
set(GVS_APIGEN_DIR ${CMAKE_CURRENT_LIST_DIR})

function(gvs_apigen name api gen_dir)
  set(files
    ${gen_dir}/${name}_ops.h
    ${gen_dir}/${name}_fe_gen.h
    ${gen_dir}/${name}_fe_gen.c
    ${gen_dir}/${name}_be_gen.h
    ${gen_dir}/${name}_be_gen.c)
  add_custom_command(
    OUTPUT ${files}
    COMMAND Python3::Interpreter ${GVS_APIGEN_DIR}/gvs_apigen.py ${api}
            --out-dir ${gen_dir}
    DEPENDS ${GVS_APIGEN_DIR}/gvs_apigen.py ${api} ${ARGN}
    COMMENT "Generating the ${name} plugin's calls from ${name}.api"
    VERBATIM)
  add_custom_target(${name}_generated DEPENDS ${files})
endfunction()
