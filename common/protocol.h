/* The control protocol: Varlink over a Unix stream socket. Each message is one
 * JSON object followed by a NUL byte. A call is
 *   {"method": "io.ccxd.Pin", "parameters": {"pid": 42, "ccx": 1}}
 * and its reply either {"parameters": {...}} or
 *   {"error": "io.ccxd.NoSuchProcess", "parameters": {...}}.
 * The interface name carries the protocol version: an incompatible change gets
 * a new interface name, and CCXD_PROTOCOL_VERSION is reported by GetVersion. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "topology.h"

#define CCXD_INTERFACE            "io.ccxd"
/* Where ccxd listens and ccxctl calls, unless told otherwise. */
#define CCXD_DEFAULT_SOCKET       "/run/ccxd/ccxd.sock"
#define CCXD_PROTOCOL_VERSION     1

#define CCXD_METHOD_GET_STATUS    CCXD_INTERFACE ".GetStatus"
#define CCXD_METHOD_GET_TOPOLOGY  CCXD_INTERFACE ".GetTopology"
#define CCXD_METHOD_GET_RULES     CCXD_INTERFACE ".GetRules"
#define CCXD_METHOD_GET_VERSION   CCXD_INTERFACE ".GetVersion"
#define CCXD_METHOD_GET_METRICS   CCXD_INTERFACE ".GetMetrics"
#define CCXD_METHOD_PIN           CCXD_INTERFACE ".Pin"
#define CCXD_METHOD_UNPIN         CCXD_INTERFACE ".Unpin"
#define CCXD_METHOD_RELOAD        CCXD_INTERFACE ".Reload"
#define CCXD_METHOD_PROBE         CCXD_INTERFACE ".Probe"
#define CCXD_METHOD_GET_LEARNED   CCXD_INTERFACE ".GetLearned"
#define CCXD_METHOD_FORGET        CCXD_INTERFACE ".Forget"
#define CCXD_METHOD_EXPLAIN       CCXD_INTERFACE ".Explain"
#define VARLINK_METHOD_GET_INFO   "org.varlink.service.GetInfo"

#define CCXD_ERROR_PERMISSION_DENIED  CCXD_INTERFACE ".PermissionDenied"
#define CCXD_ERROR_NO_SUCH_PROCESS    CCXD_INTERFACE ".NoSuchProcess"
#define CCXD_ERROR_NO_SUCH_CCX        CCXD_INTERFACE ".NoSuchCCX"
#define CCXD_ERROR_NOT_PINNED         CCXD_INTERFACE ".NotPinned"
#define CCXD_ERROR_PIN_FAILED         CCXD_INTERFACE ".PinFailed"
#define CCXD_ERROR_CONFIG_INVALID     CCXD_INTERFACE ".ConfigInvalid"
#define CCXD_ERROR_DISABLED           CCXD_INTERFACE ".Disabled"
#define CCXD_ERROR_INTERNAL           CCXD_INTERFACE ".InternalError"
#define CCXD_ERROR_PROBE_RUNNING      CCXD_INTERFACE ".ProbeRunning"
#define CCXD_ERROR_PROBE_FAILED       CCXD_INTERFACE ".ProbeFailed"
#define CCXD_ERROR_NOT_LEARNED        CCXD_INTERFACE ".NotLearned"
#define VARLINK_ERROR_METHOD_NOT_FOUND    "org.varlink.service.MethodNotFound"
#define VARLINK_ERROR_INVALID_PARAMETER   "org.varlink.service.InvalidParameter"
#define VARLINK_ERROR_INTERFACE_NOT_FOUND "org.varlink.service.InterfaceNotFound"

/* Limits: a request is small; a status reply of a busy machine is not. */
#define CCXD_REQUEST_MAX          (64 * 1024)
#define CCXD_REPLY_MAX            (64 * 1024 * 1024)
#define CCXD_JSON_DEPTH_MAX       16

/* A blocking client call, for ccxctl and tests: connects to socket_path, sends
 * method with parameters (may be NULL), waits up to timeout_ms for the reply.
 * Returns 0 with *reply_params set (a new reference) and *error_name NULL on
 * success, 0 with *error_name set (malloc'd) and *reply_params holding the
 * error's parameters on a Varlink error, or -errno when no reply could be had
 * (-ENOENT/-ECONNREFUSED: no daemon). */
int protocol_call(const char *socket_path, const char *method, json_object *parameters,
		  int timeout_ms, json_object **reply_params, char **error_name);

/* One call as the server decodes it, before any method is looked up. */
struct protocol_call {
	json_object *message;        /* the whole parsed message, owning what the others point into */
	const char *method;
	json_object *parameters;     /* borrowed from message; NULL when the call had none */
	bool oneway;                 /* the client wants no reply */
};

/* Decodes one message (len bytes, without its NUL terminator): strict JSON,
 * nested at most CCXD_JSON_DEPTH_MAX deep, nothing after it, an object with a
 * string "method" and, if any, an object "parameters". Pure, so it can be
 * fuzzed without a socket. Returns 0 and fills *ret (free with
 * protocol_call_done()); -EBADMSG when the text is not such JSON (the stream
 * cannot be trusted further); -EINVAL when it is JSON of the wrong shape;
 * -ENOMEM. */
int protocol_parse_call(const char *text, size_t len, struct protocol_call *ret);
void protocol_call_done(struct protocol_call *call);

/* protocol_call with "more": true, for methods that stream (io.ccxd.Probe):
 * each reply carrying "continues": true goes to on_more(parameters,
 * userdata) (a borrowed reference; a negative return stops and is returned),
 * and the last one is returned as protocol_call returns it. timeout_ms
 * bounds the wait for each reply, not the whole call. */
typedef int (*protocol_more_fn)(json_object *parameters, void *userdata);
int protocol_call_more(const char *socket_path, const char *method, json_object *parameters, int timeout_ms,
		       protocol_more_fn on_more, void *userdata, json_object **reply_params, char **error_name);

/* A topology as GetTopology sends it (ccxctl builds the same for --topology). */
json_object *protocol_topology_json(const struct topology *t);
