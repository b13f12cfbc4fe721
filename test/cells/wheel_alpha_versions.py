import ci_alpha, ci_beta
(ci_alpha.VERSION, ci_beta.VERSION, ci_alpha.beta_version())
