"""The sandbox: jobs run in children forked from the zygote (jobs, zygote), their typed events (events), the
kernel layers and the audit hook (hardening), the tamper guard (tamper). It knows no track and no check: what
a child must not read, and what the zygote preloads, are passed in by the layers above."""
