x = 1
import ci_beta
ci_beta.VERSION
