"""From rows to counts and decisions: encoding labels, the counting kernel, decision rules, scores, the ICM suite."""
