#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "crowding.h"
#include "groups.h"
#include "seatings.h"
#include "validator.h"

#define USEC_PER_SEC   UINT64_C(1000000)

struct config *config_new_default(void) {
	struct config *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->socket = strdup(CONFIG_DEFAULT_SOCKET);
	c->topology = strdup("system");
	c->state_dir = strdup("/var/lib/ccxd");
	c->runtime_dir = strdup(CONFIG_DEFAULT_RUNTIME);
	c->mode = CONFIG_MODE_ENFORCE;
	c->interval_usec = USEC_PER_SEC;
	c->restore_on_exit = true;
	c->automatic = true;
	c->realtime_wait = true;
	c->calibrate = true;
	c->bpf = SAMPLER_READ_BATCH;
	c->min_rate = GROUPS_DEFAULT_MIN_RATE;
	c->min_message_rate = GROUPS_DEFAULT_MIN_MESSAGE_RATE;
	c->min_gain = VALIDATOR_DEFAULT_MIN_GAIN;
	c->window = 3;
	c->crowded_wait = CROWDING_DEFAULT_WAIT;
	c->crowded_samples = CROWDING_DEFAULT_SAMPLES;
	c->recheck_usec = 5 * 60 * 1000000ULL;
	/* whole-ccx is for groups of several users' processes, or where a
	 * config asks for it. */
	for (size_t i = 0; i < SEATINGS_DEFAULT_N; i++)
		c->seatings[c->n_seatings++] = seatings_default[i];
	if (!c->socket || !c->topology || !c->state_dir || !c->runtime_dir) {
		config_free(c);
		return NULL;
	}
	return c;
}

void config_free(struct config *c) {
	if (!c)
		return;
	for (size_t i = 0; i < c->n_rules; i++)
		rule_done(&c->rules[i]);
	free(c->rules);
	for (size_t i = 0; i < c->n_files; i++)
		free(c->files[i]);
	free(c->files);
	free(c->path);
	free(c->socket);
	free(c->topology);
	free(c->state_dir);
	free(c->runtime_dir);
	free(c->metrics_file);
	free(c);
}
