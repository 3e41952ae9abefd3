//! The constant-folding hook.
//!
//! The planner cannot depend on the evaluator (it sits below the
//! pipeline), yet constant folding must compute exactly what run time
//! computes. So the planner folds through a [`ConstantEvaluator`] its
//! caller provides: the engine passes the pipeline's evaluator, and
//! `'1.5'::INTEGER`, `1.0 / 0.0` or `DATE '9999-12-31' + 1` give the same
//! value or error as a constant as over a column.

use crate::expr::Expr;
use crate::scalar::ScalarValue;

/// An error raised while evaluating a constant, with its cause.
pub type EvalError = Box<dyn std::error::Error + Send + Sync>;

/// Evaluates expressions that read no column.
pub trait ConstantEvaluator: Sync {
    /// The value of `expr`, which reads no column and whose type the
    /// planner has checked; the value has the expression's type.
    ///
    /// # Errors
    /// The error evaluating it raises (division by zero, overflow, a
    /// failed conversion), as running it would.
    fn evaluate(&self, expr: &Expr) -> Result<ScalarValue, EvalError>;

    /// `values` cast to `to`, as `CAST` does (a long IN list is cast in
    /// one call). The default casts them one at a time.
    ///
    /// # Errors
    /// The first failed conversion.
    fn cast_values(
        &self,
        values: Vec<ScalarValue>,
        to: &arrow_schema::DataType,
    ) -> Result<Vec<ScalarValue>, EvalError> {
        values
            .into_iter()
            .map(|v| {
                self.evaluate(&Expr::Cast {
                    expr: Box::new(Expr::Literal(v)),
                    to: to.clone(),
                    try_cast: false,
                })
            })
            .collect()
    }
}
