/*
 * For test_ucx_runtime_safe.sh: preloaded before libprotosel_ucx.so, it
 * renames one of UCP's protocols, as a release whose protocol protosel's
 * mapping does not know would name it: PSEL_FAKE_UCP_PROTO_RENAME=OLD=NEW.
 * UCP's protocol objects are plain data of libucp (ucp_protocols[]), so
 * the name is changed where UCP reads it, before the program calls UCP.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name; /* the first field of ucp_proto_t in every release */
} fake_ucp_proto_t;

static char fake_new_name[128];

static void __attribute__((constructor)) fake_ucp_proto_rename(void)
{
    const char *spec = getenv("PSEL_FAKE_UCP_PROTO_RENAME");
    unsigned (*count)(void) = dlsym(RTLD_DEFAULT, "ucp_protocols_count");
    fake_ucp_proto_t **protocols = dlsym(RTLD_DEFAULT, "ucp_protocols");
    const char *eq;
    unsigned i;

    if ((spec == NULL) || ((eq = strchr(spec, '=')) == NULL) ||
        (count == NULL) || (protocols == NULL) ||
        (strlen(eq + 1) >= sizeof(fake_new_name))) {
        abort(); /* a mistake in the test, or no libucp in the program */
    }
    strcpy(fake_new_name, eq + 1);
    for (i = 0; i < count(); ++i) {
        if ((strlen(protocols[i]->name) == (size_t)(eq - spec)) &&
            !strncmp(protocols[i]->name, spec, eq - spec)) {
            protocols[i]->name = fake_new_name;
            return;
        }
    }
    abort();
}
