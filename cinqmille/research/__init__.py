"""Research on the variants: comparisons of rulesets (`compare`), figures (`plots`) and the results
page docs/variants.md (`page`)."""

from .compare import CompareConfig, Rate, RulesetComparison, compare, compare_ruleset, table_rows

__all__ = ["CompareConfig", "Rate", "RulesetComparison", "compare", "compare_ruleset", "table_rows"]
