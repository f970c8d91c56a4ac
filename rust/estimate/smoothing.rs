//! The estimators: [`Smoothing`], and the one list of their names, the parameters each takes and
//! their defaults ([`ESTIMATORS`], exported to Python as `_core.SMOOTHINGS`), parsed by
//! [`Smoothing::parse`].

use crate::error::{Error, Result};

/// A parameter of an estimator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parameter {
    /// Additive smoothing's k (default 1).
    K,
    /// The one discount of absolute discounting and Kneser-Ney (default 0.75).
    Discount,
    /// Stupid backoff's alpha (default 0.4).
    Alpha,
    /// Modified Kneser-Ney: use lmplz's fallback discounts (D1=0.5, D2=1, D3+=1.5) when the
    /// estimate from the count-of-counts fails (default false).
    DiscountFallback,
}

/// A parameter's default value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DefaultValue {
    /// A number.
    Number(f64),
    /// A flag.
    Flag(bool),
}

const DEFAULT_K: f64 = 1.0;
const DEFAULT_DISCOUNT: f64 = 0.75;
const DEFAULT_ALPHA: f64 = 0.4;

impl Parameter {
    /// The parameter's name in the Python API.
    pub fn name(self) -> &'static str {
        match self {
            Parameter::K => "k",
            Parameter::Discount => "discount",
            Parameter::Alpha => "alpha",
            Parameter::DiscountFallback => "discount_fallback",
        }
    }

    /// The value used when the parameter is not given.
    pub fn default(self) -> DefaultValue {
        match self {
            Parameter::K => DefaultValue::Number(DEFAULT_K),
            Parameter::Discount => DefaultValue::Number(DEFAULT_DISCOUNT),
            Parameter::Alpha => DefaultValue::Number(DEFAULT_ALPHA),
            Parameter::DiscountFallback => DefaultValue::Flag(false),
        }
    }
}

/// Every estimator name [`Smoothing::parse`] accepts, with the parameters it takes: the one list
/// (Python's `_core.SMOOTHINGS`, which the `Literal` of `fastppl.model.Smoothing` is tested to
/// equal).
pub const ESTIMATORS: [(&str, &[Parameter]); 9] = [
    ("mle", &[]),
    ("additive", &[Parameter::K]),
    ("laplace", &[]),
    ("lidstone", &[Parameter::K]),
    ("witten_bell", &[]),
    ("absolute_discounting", &[Parameter::Discount]),
    ("kneser_ney", &[Parameter::Discount]),
    ("modified_kneser_ney", &[Parameter::DiscountFallback]),
    ("stupid_backoff", &[Parameter::Alpha]),
];

/// The parameters given to [`Smoothing::parse`]; `None` takes the default. Each estimator reads
/// only the ones it takes (see [`ESTIMATORS`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Parameters {
    pub k: Option<f64>,
    pub discount: Option<f64>,
    pub alpha: Option<f64>,
    pub discount_fallback: bool,
}

/// An estimator and its parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Smoothing {
    /// Maximum likelihood.
    Mle,
    /// Add-k (Laplace for k = 1, Lidstone otherwise).
    Additive { k: f64 },
    /// Interpolated Witten-Bell.
    WittenBell,
    /// Interpolated absolute discounting with one discount.
    AbsoluteDiscounting { discount: f64 },
    /// Interpolated Kneser-Ney with one discount.
    KneserNey { discount: f64 },
    /// Interpolated modified Kneser-Ney (Chen & Goodman), KenLM's lmplz.
    ModifiedKneserNey { discount_fallback: bool },
    /// Stupid backoff (Brants et al. 2007).
    StupidBackoff { alpha: f64 },
}

impl Smoothing {
    /// The estimator called `name` (one of [`ESTIMATORS`]) with `params`, defaults filled in
    /// (`laplace` is additive with k = 1, `lidstone` a synonym of `additive`).
    ///
    /// ```
    /// use fastppl::estimate::{Parameters, Smoothing};
    /// let s = Smoothing::parse("kneser_ney", &Parameters::default()).unwrap();
    /// assert_eq!(s, Smoothing::KneserNey { discount: 0.75 });
    /// assert!(Smoothing::parse("kn", &Parameters::default()).is_err());
    /// ```
    pub fn parse(name: &str, params: &Parameters) -> Result<Smoothing> {
        let discount = params.discount.unwrap_or(DEFAULT_DISCOUNT);
        Ok(match name {
            "mle" => Smoothing::Mle,
            "laplace" => Smoothing::Additive { k: 1.0 },
            "additive" | "lidstone" => Smoothing::Additive {
                k: params.k.unwrap_or(DEFAULT_K),
            },
            "witten_bell" => Smoothing::WittenBell,
            "absolute_discounting" => Smoothing::AbsoluteDiscounting { discount },
            "kneser_ney" => Smoothing::KneserNey { discount },
            "modified_kneser_ney" => Smoothing::ModifiedKneserNey {
                discount_fallback: params.discount_fallback,
            },
            "stupid_backoff" => Smoothing::StupidBackoff {
                alpha: params.alpha.unwrap_or(DEFAULT_ALPHA),
            },
            other => {
                let names: Vec<&str> = ESTIMATORS.iter().map(|(name, _)| *name).collect();
                return Err(Error::invalid(format!(
                    "unknown smoothing {other:?}; expected one of {}",
                    names.join(", ")
                )));
            }
        })
    }

    /// The name used by the Python API.
    pub fn name(&self) -> &'static str {
        match self {
            Smoothing::Mle => "mle",
            Smoothing::Additive { .. } => "additive",
            Smoothing::WittenBell => "witten_bell",
            Smoothing::AbsoluteDiscounting { .. } => "absolute_discounting",
            Smoothing::KneserNey { .. } => "kneser_ney",
            Smoothing::ModifiedKneserNey { .. } => "modified_kneser_ney",
            Smoothing::StupidBackoff { .. } => "stupid_backoff",
        }
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str, v: f64, range: &str| {
            Err(Error::invalid(format!(
                "{}: {what} must be {range}, got {v}",
                self.name()
            )))
        };
        match *self {
            Smoothing::Additive { k } if !(k > 0.0 && k.is_finite()) => {
                bad("k", k, "a finite number > 0")
            }
            Smoothing::AbsoluteDiscounting { discount } | Smoothing::KneserNey { discount }
                if !(discount > 0.0 && discount <= 1.0) =>
            {
                bad("discount", discount, "in (0, 1]")
            }
            Smoothing::StupidBackoff { alpha } if !(alpha > 0.0 && alpha.is_finite()) => {
                bad("alpha", alpha, "a finite number > 0")
            }
            _ => Ok(()),
        }
    }

    /// Whether the estimator is interpolated: p(w|h) = alpha(hw) + gamma(h) p(w|h'), which is
    /// what an ARPA file holds and what [`crate::estimate::budgeted`] estimates.
    pub fn is_interpolated(&self) -> bool {
        matches!(
            self,
            Smoothing::WittenBell
                | Smoothing::AbsoluteDiscounting { .. }
                | Smoothing::KneserNey { .. }
                | Smoothing::ModifiedKneserNey { .. }
        )
    }

    /// Whether the estimator's scores are probabilities (sum to 1 over the vocabulary in every
    /// context); stupid backoff's are scores only.
    pub fn is_normalized(&self) -> bool {
        !matches!(self, Smoothing::StupidBackoff { .. })
    }

    /// Whether the estimator discounts counts (and so has discounts to report).
    pub fn is_discounted(&self) -> bool {
        matches!(
            self,
            Smoothing::AbsoluteDiscounting { .. }
                | Smoothing::KneserNey { .. }
                | Smoothing::ModifiedKneserNey { .. }
        )
    }

    /// Whether orders below the highest are estimated from Kneser-Ney's adjusted counts.
    pub fn uses_adjusted_counts(&self) -> bool {
        matches!(
            self,
            Smoothing::KneserNey { .. } | Smoothing::ModifiedKneserNey { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_name_parses_and_its_parameters_reach_it() {
        for (name, takes) in ESTIMATORS {
            let plain = Smoothing::parse(name, &Parameters::default()).unwrap();
            plain.validate().unwrap();
            let given = Parameters {
                k: Some(2.0),
                discount: Some(0.5),
                alpha: Some(0.25),
                discount_fallback: true,
            };
            // a parameter the estimator takes changes it; the others are ignored
            assert_eq!(
                Smoothing::parse(name, &given).unwrap() != plain,
                !takes.is_empty()
            );
        }
    }

    #[test]
    fn defaults_are_the_listed_ones() {
        let p = Parameters::default();
        assert_eq!(
            Smoothing::parse("additive", &p).unwrap(),
            Smoothing::Additive { k: 1.0 }
        );
        assert_eq!(Parameter::K.default(), DefaultValue::Number(1.0));
        assert_eq!(
            Smoothing::parse("absolute_discounting", &p).unwrap(),
            Smoothing::AbsoluteDiscounting { discount: 0.75 }
        );
        assert_eq!(Parameter::Discount.default(), DefaultValue::Number(0.75));
        assert_eq!(
            Smoothing::parse("stupid_backoff", &p).unwrap(),
            Smoothing::StupidBackoff { alpha: 0.4 }
        );
        assert_eq!(Parameter::Alpha.default(), DefaultValue::Number(0.4));
        assert_eq!(
            Parameter::DiscountFallback.default(),
            DefaultValue::Flag(false)
        );
    }
}
