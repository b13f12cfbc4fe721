import ci_beta
ci_beta.VERSION
