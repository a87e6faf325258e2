//! Recursive descent over the tokens: `or` binds loosest, then `and`, then `not`.
//!
//! ```text
//! filter     = or END
//! or         = and *( "or" and )
//! and        = unary *( "and" unary )
//! unary      = "not" unary / primary
//! primary    = "(" or ")" / comparison / property / constant
//! comparison = operand op operand      ; one property and one literal, either order
//! property   = word                    ; a bare Boolean property: `word eq true`
//! constant   = "true" / "false"        ; a whole condition matching every row or none
//! operand    = word / literal
//! op         = "eq" / "ne" / "gt" / "ge" / "lt" / "le"
//! ```

use super::ast::{CompareOp, Comparison, Expr, Field, Literal};
use super::error::{QueryError, Result, SyntaxError};
use super::lexer::{Lexer, Token, TokenKind};
use super::limits::{MAX_FILTER_BYTES, MAX_NESTING};

/// Parses a whole `$filter` text.
pub(super) fn parse(text: &str) -> Result<Expr> {
    if text.len() > MAX_FILTER_BYTES {
        return Err(QueryError::new(
            MAX_FILTER_BYTES,
            SyntaxError::TooLong { len: text.len() },
        ));
    }
    let mut parser = Parser::new(text)?;
    if parser.peek.kind == TokenKind::End {
        return Err(QueryError::new(parser.peek.position, SyntaxError::Empty));
    }
    let expr = parser.or(0)?;
    match parser.peek.kind {
        TokenKind::End => Ok(expr),
        _ => Err(parser.unexpected("'and', 'or' or the end of the filter")),
    }
}

/// The parser state: the lexer and one token of lookahead.
struct Parser<'a> {
    lexer: Lexer<'a>,
    peek: Token<'a>,
}

/// One side of a comparison before it is known which side is the property.
enum Operand<'a> {
    Word(&'a str, usize),
    Literal(Literal),
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Result<Self> {
        let mut lexer = Lexer::new(text);
        let peek = lexer.next_token()?;
        Ok(Self { lexer, peek })
    }

    /// Consumes the lookahead token and returns it.
    fn advance(&mut self) -> Result<Token<'a>> {
        let next = self.lexer.next_token()?;
        Ok(std::mem::replace(&mut self.peek, next))
    }

    fn peek_is_word(&self, word: &str) -> bool {
        self.peek.kind == TokenKind::Word(word)
    }

    fn unexpected(&self, expected: &'static str) -> QueryError {
        QueryError::new(
            self.peek.position,
            SyntaxError::Unexpected {
                expected,
                found: self.peek.kind.describe(),
            },
        )
    }

    fn or(&mut self, depth: usize) -> Result<Expr> {
        let first = self.and(depth)?;
        if !self.peek_is_word("or") {
            return Ok(first);
        }
        let mut operands = vec![first];
        while self.peek_is_word("or") {
            self.advance()?;
            operands.push(self.and(depth)?);
        }
        Ok(Expr::Or(operands))
    }

    fn and(&mut self, depth: usize) -> Result<Expr> {
        let first = self.unary(depth)?;
        if !self.peek_is_word("and") {
            return Ok(first);
        }
        let mut operands = vec![first];
        while self.peek_is_word("and") {
            self.advance()?;
            operands.push(self.unary(depth)?);
        }
        Ok(Expr::And(operands))
    }

    fn unary(&mut self, depth: usize) -> Result<Expr> {
        if depth >= MAX_NESTING {
            return Err(QueryError::new(self.peek.position, SyntaxError::TooDeep));
        }
        if self.peek_is_word("not") {
            self.advance()?;
            return Ok(Expr::Not(Box::new(self.unary(depth + 1)?)));
        }
        if self.peek.kind == TokenKind::Open {
            self.advance()?;
            let inner = self.or(depth + 1)?;
            if self.peek.kind != TokenKind::Close {
                return Err(self.unexpected("')', 'and' or 'or'"));
            }
            self.advance()?;
            return Ok(inner);
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Expr> {
        let left = self.operand()?;
        if let Operand::Word(name, _) = left
            && self.ends_condition()
        {
            match word_literal(name) {
                // A bare `true`/`false` is a whole condition, accepted by the service (an
                // always-false filter returns no rows, an always-true one every row).
                Some(Literal::Boolean(flag)) => return Ok(Expr::Const(flag)),
                // `NaN` or `INF` alone is no condition: the operator check below reports it.
                Some(_) => {}
                // The service reads a bare property as `name eq true` ("IsActive", "not
                // IsActive"; Microsoft's "Constructing filter strings" page).
                None => {
                    return Ok(Expr::Compare(Comparison {
                        field: Field::from_name(name),
                        op: CompareOp::Eq,
                        literal: Literal::Boolean(true),
                    }));
                }
            }
        }
        let op_token = self.advance()?;
        let op = match op_token.kind {
            TokenKind::Word(word) => CompareOp::from_word(word).ok_or_else(|| {
                QueryError::new(
                    op_token.position,
                    SyntaxError::UnknownOperator {
                        found: super::error::excerpt(word),
                    },
                )
            })?,
            other => {
                return Err(QueryError::new(
                    op_token.position,
                    SyntaxError::Unexpected {
                        expected: "a comparison operator (eq, ne, gt, ge, lt, le)",
                        found: other.describe(),
                    },
                ));
            }
        };
        let right_position = self.peek.position;
        let right = self.operand()?;
        let (field, op, literal) = match (left, right) {
            (Operand::Word(name, _), Operand::Literal(literal)) => (name, op, literal),
            (Operand::Literal(literal), Operand::Word(name, _)) => (name, op.mirrored(), literal),
            // Two words: the one spelling a literal is the literal; the left one is preferred
            // as the property, so `Flag eq true` compares the property `Flag`.
            (Operand::Word(left, _), Operand::Word(right, right_at)) => {
                if let Some(literal) = word_literal(right) {
                    (left, op, literal)
                } else if let Some(literal) = word_literal(left) {
                    (right, op.mirrored(), literal)
                } else {
                    return Err(QueryError::new(
                        right_at,
                        SyntaxError::NeedsPropertyAndLiteral,
                    ));
                }
            }
            (Operand::Literal(_), Operand::Literal(_)) => {
                return Err(QueryError::new(
                    right_position,
                    SyntaxError::NeedsPropertyAndLiteral,
                ));
            }
        };
        Ok(Expr::Compare(Comparison {
            field: Field::from_name(field),
            op,
            literal,
        }))
    }

    /// Whether the lookahead closes a condition (so the operand before it stands alone).
    fn ends_condition(&self) -> bool {
        matches!(
            self.peek.kind,
            TokenKind::End | TokenKind::Close | TokenKind::Word("and" | "or")
        )
    }

    fn operand(&mut self) -> Result<Operand<'a>> {
        let token = self.advance()?;
        match token.kind {
            TokenKind::Word(word) if !is_keyword(word) => Ok(Operand::Word(word, token.position)),
            TokenKind::Literal(literal) => Ok(Operand::Literal(literal)),
            other => Err(QueryError::new(
                token.position,
                SyntaxError::Unexpected {
                    expected: "a property name or a literal",
                    found: other.describe(),
                },
            )),
        }
    }
}

/// Words that cannot be a property name in a comparison.
fn is_keyword(word: &str) -> bool {
    matches!(word, "and" | "or" | "not") || CompareOp::from_word(word).is_some()
}

/// The literal a bare word spells, if any.
fn word_literal(word: &str) -> Option<Literal> {
    Some(match word {
        "true" => Literal::Boolean(true),
        "false" => Literal::Boolean(false),
        "NaN" => Literal::Double(f64::NAN),
        "INF" => Literal::Double(f64::INFINITY),
        _ => return None,
    })
}
