"""Toast testbed: many clients on one machine, scenarios, baselines and reports (thesis ch. 5)."""
