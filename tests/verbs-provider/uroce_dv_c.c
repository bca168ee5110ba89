/* uroce_dv.h compiled as C, as the installed header is used: the sizes and
 * offsets C gives its structs, for test_dv.cpp to compare with C++'s. */
#include <infiniband/uroce_dv.h>
#include <stddef.h>

const size_t uroce_c_dv_qp_init_attr_size = sizeof(struct uroce_dv_qp_init_attr);
const size_t uroce_c_dv_dc_init_attr_size = sizeof(struct uroce_dv_dc_init_attr);
const size_t uroce_c_dv_dc_init_attr_key = offsetof(struct uroce_dv_dc_init_attr, dct_access_key);
const size_t uroce_c_dv_qp_init_attr_send_ops =
    offsetof(struct uroce_dv_qp_init_attr, send_ops_flags);
const size_t uroce_c_dv_qp_ex_size = sizeof(struct uroce_dv_qp_ex);
const size_t uroce_c_dv_context_size = sizeof(struct uroce_dv_context);
