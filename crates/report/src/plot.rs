//! Drawing: each function turns one plot's data ([`crate::series`]) into an
//! SVG document through `plotters`' SVG backend (text as SVG `<text>`, no
//! font files or system libraries involved).
//!
//! Every mark of a data series is drawn opaque in a colour of [`PALETTE`]
//! and nothing else is (legend samples have [`LEGEND_OPACITY`], axes and
//! text are black or grey), so a mark can be told from the rest: the
//! tests count them.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use rtlab_model::printable;

use rtlab_model::results::SpanKind;

use crate::series::{
    Breakdown, Gantt, Histogram, LagBar, Line, RealVsSim, ResponseBound, ScheduleChart,
};

/// Width and height of every plot, in SVG pixels.
pub const SIZE: (u32, u32) = (900, 420);

/// Series colours (Tableau 10 without its red, which [`MISSED`] alone
/// uses), as `#RRGGBB` in the SVG.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
    RGBColor(0xbc, 0xbd, 0x22),
];

/// A job that missed its deadline, and only that: never a task's colour.
/// Missed jobs are also marked by shape (a black outline and a cross at
/// the deadline), so the chart reads in greyscale too.
pub const MISSED: RGBColor = RGBColor(0xd6, 0x27, 0x28);

/// Opacity of the legend's colour samples, so they do not count as marks.
pub const LEGEND_OPACITY: f64 = 0.9;

/// Why a plot could not be drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlotError(pub String);

impl std::fmt::Display for PlotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot draw the plot: {}", self.0)
    }
}

impl std::error::Error for PlotError {}

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for PlotError {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        PlotError(e.to_string())
    }
}

/// An SVG document, or why there is none.
pub type PlotResult = Result<String, PlotError>;

/// The colour of series `i`.
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Draws on a fresh white SVG canvas of [`SIZE`] and returns the document.
fn svg(draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), PlotError>) -> PlotResult {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root)?;
        root.present()?;
    }
    Ok(out)
}

/// Names from files made safe for a label: control and invisible
/// characters escaped (`\n`, `\u{202e}`); plotters escapes `<`, `&`, `"`.
fn label(text: &str) -> String {
    printable(text).into_owned()
}

fn font() -> TextStyle<'static> {
    ("sans-serif", 14).into_font().color(&BLACK)
}

/// `value` rounded up to a "nice" axis end (1, 2 or 5 times a power of 10).
fn nice_ceiling(value: f64) -> f64 {
    if value <= 0.0 || !value.is_finite() {
        return 1.0;
    }
    let power = 10f64.powf(value.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|&v| v >= value)
        .unwrap_or(10.0 * power)
}

/// Category names under a chart's x axis: whole and level when every name
/// fits its slot (about 7 px a character at 14 px), else upright, each cut
/// to at most [`UPRIGHT_CHARS`] characters and never two alike (a cut that
/// would make two names read the same keeps more of each).
struct Categories {
    names: Vec<String>,
    upright: bool,
}

/// Characters an upright category name keeps at most.
const UPRIGHT_CHARS: usize = 22;

impl Categories {
    fn of<'n>(names: impl Iterator<Item = &'n str>) -> Categories {
        let names: Vec<String> = names.map(label).collect();
        // The plot's width less the y labels and margins, shared by the names.
        let slot = (SIZE.0 as usize - 94) / names.len().max(1);
        let level = (slot / 7).max(3);
        if names.iter().all(|n| n.chars().count() <= level) {
            return Categories {
                names,
                upright: false,
            };
        }
        Categories {
            names: distinct_shortened(&names, UPRIGHT_CHARS),
            upright: true,
        }
    }

    /// The height under the x axis the names need (px).
    fn area(&self) -> u32 {
        match self.upright {
            false => 40,
            true => {
                let longest = self.names.iter().map(|n| n.chars().count()).max();
                16 + 7 * longest.unwrap_or(0) as u32
            }
        }
    }

    /// Writes the `i`-th name under the chart's x axis at x = i (`at` maps
    /// a chart x to the axis' pixel): category names, which plotters'
    /// numeric labels cannot give.
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        at: impl Fn(f64) -> (i32, i32),
    ) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let style = match self.upright {
            false => font().pos(Pos::new(HPos::Center, VPos::Top)),
            true => font()
                .transform(FontTransform::Rotate270)
                .pos(Pos::new(HPos::Right, VPos::Center)),
        };
        for (i, text) in self.names.iter().enumerate() {
            let (px, py) = at(i as f64);
            root.draw(&Text::new(text.clone(), (px, py + 6), style.clone()))
                .map_err(PlotError::from)?;
        }
        Ok(())
    }
}

/// `names` each cut to `max` characters ([`shortened`]), or to as many more
/// as keep every two distinct names distinct.
fn distinct_shortened(names: &[String], max: usize) -> Vec<String> {
    let longest = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let mut keep = max;
    loop {
        let cut: Vec<String> = names.iter().map(|n| shortened(n, keep)).collect();
        let clash =
            (0..cut.len()).any(|i| (0..i).any(|j| cut[i] == cut[j] && names[i] != names[j]));
        if !clash || keep >= longest {
            return cut;
        }
        keep += 1;
    }
}

/// Lines, with a dot on each point when `dots` and there are few, and a
/// legend naming each.
fn draw_lines<'a, 'b: 'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>,
    lines: &[Line],
    dots: bool,
    legend_at: SeriesLabelPosition,
) -> Result<(), PlotError>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for (i, line) in lines.iter().enumerate() {
        let c = color(i);
        chart
            .draw_series(LineSeries::new(
                line.points.iter().copied(),
                c.stroke_width(2),
            ))?
            .label(label(&line.label))
            .legend(move |(x, y)| {
                PathElement::new(
                    vec![(x, y), (x + 20, y)],
                    c.mix(LEGEND_OPACITY).stroke_width(2),
                )
            });
        if dots && line.points.len() <= 60 {
            chart.draw_series(line.points.iter().map(|&p| Circle::new(p, 3, c.filled())))?;
        }
    }
    legend(chart, legend_at)?;
    Ok(())
}

/// The corner of the plot area (x over `xs`, y over `ys`) with the fewest
/// points in its outer 40 % each way: where the legend hides least.
fn emptiest_corner(lines: &[Line], xs: (f64, f64), ys: (f64, f64)) -> SeriesLabelPosition {
    let corners = [
        (SeriesLabelPosition::UpperRight, true, true),
        (SeriesLabelPosition::UpperLeft, false, true),
        (SeriesLabelPosition::LowerRight, true, false),
        (SeriesLabelPosition::LowerLeft, false, false),
    ];
    let inside = |(x, y): (f64, f64), right: bool, upper: bool| {
        let fx = (x - xs.0) / (xs.1 - xs.0);
        let fy = (y - ys.0) / (ys.1 - ys.0);
        (if right { fx > 0.6 } else { fx < 0.4 }) && (if upper { fy > 0.6 } else { fy < 0.4 })
    };
    corners
        .into_iter()
        .min_by_key(|&(_, right, upper)| {
            lines
                .iter()
                .flat_map(|l| l.points.iter())
                .filter(|&&p| inside(p, right, upper))
                .count()
        })
        .map_or(SeriesLabelPosition::UpperRight, |c| c.0)
}

/// A chart builder with the margins and label areas all plots share.
fn builder<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut b = ChartBuilder::on(root);
    b.margin(12).x_label_area_size(40).y_label_area_size(70);
    b
}

/// The legend box: every series' label and colour sample.
fn legend<'a, 'b: 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, CT>,
    position: SeriesLabelPosition,
) -> Result<(), PlotError> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(font())
        .position(position)
        .draw()?;
    Ok(())
}

/// cyclictest's classic plot: per thread, samples per 1 us latency bucket
/// as a step outline (down to the axis between non-adjacent buckets),
/// count on a log scale.
pub fn latency_histogram(histograms: &[Histogram]) -> PlotResult {
    let max_us = histograms
        .iter()
        .flat_map(|h| h.buckets.iter().map(|b| b.0))
        .max()
        .unwrap_or(0);
    let max_count = histograms
        .iter()
        .flat_map(|h| h.buckets.iter().map(|b| b.1))
        .max()
        .unwrap_or(1);
    // A tail far beyond the bulk (a 28.8 ms wake-up among 30 us ones) on
    // a linear axis would squeeze the bulk into its first pixels: from
    // LONG_TAIL_US on, the latency axis is logarithmic.
    let long_tail = max_us >= LONG_TAIL_US;
    let lines: Vec<Line> = histograms
        .iter()
        .map(|h| Line {
            label: h.label.clone(),
            points: steps(&h.buckets, HISTOGRAM_FLOOR)
                .into_iter()
                .map(|(x, y)| (if long_tail { x.max(LOG_AXIS_START) } else { x }, y))
                .collect(),
        })
        .collect();
    let y = (HISTOGRAM_FLOOR..nice_ceiling(max_count as f64 * 2.0)).log_scale();
    svg(|root| {
        if long_tail {
            let x = (LOG_AXIS_START..nice_ceiling(max_us as f64 + 1.0)).log_scale();
            let mut chart = builder(root).build_cartesian_2d(x, y)?;
            chart
                .configure_mesh()
                .x_desc("wake-up latency (us, log)")
                .y_desc("samples (log)")
                .label_style(font())
                .light_line_style(WHITE)
                .draw()?;
            return draw_lines(&mut chart, &lines, false, SeriesLabelPosition::UpperRight);
        }
        let mut chart =
            builder(root).build_cartesian_2d(0f64..(max_us as f64 + 1.0).max(10.0), y)?;
        chart
            .configure_mesh()
            .x_desc("wake-up latency (us)")
            .y_desc("samples (log)")
            .label_style(font())
            .light_line_style(WHITE)
            .draw()?;
        draw_lines(&mut chart, &lines, false, SeriesLabelPosition::UpperRight)
    })
}

/// The largest latency (us) drawn on a linear axis: beyond it the
/// histogram's latency axis is logarithmic.
pub const LONG_TAIL_US: u64 = 2000;

/// Where a logarithmic latency axis starts (us): the 0 us bucket's left
/// edge is drawn there.
const LOG_AXIS_START: f64 = 0.5;

/// The bottom of the histogram's log axis (below one sample).
const HISTOGRAM_FLOOR: f64 = 0.5;

/// The outline of 1-wide buckets `(x, count)`: across each bucket at its
/// count, down to `floor` where the next bucket is not adjacent.
pub fn steps(buckets: &[(u64, u64)], floor: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(buckets.len() * 2 + 4);
    let mut end: Option<u64> = None;
    for &(x, n) in buckets {
        if end != Some(x) {
            if let Some(e) = end {
                out.push((e as f64, floor));
            }
            out.push((x as f64, floor));
        }
        out.push((x as f64, n as f64));
        out.push((x as f64 + 1.0, n as f64));
        end = Some(x + 1);
    }
    if let Some(e) = end {
        out.push((e as f64, floor));
    }
    out
}

/// Lines of y against x on linear axes from 0, with axis names: latency
/// vs time, response time vs release, ratio vs utilization.
pub fn lines(lines: &[Line], x_desc: &str, y_desc: &str, y_max: Option<f64>) -> PlotResult {
    let all = || lines.iter().flat_map(|l| l.points.iter());
    let data_min = all().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let x_max = all().map(|p| p.0).fold(0.0, f64::max);
    // From 0 unless the data start well above it (a sweep over U = 0.6..1
    // gets an axis over 0.6..1, not 0..1), with a margin either side.
    let x_min = if data_min.is_finite() && data_min > 0.2 * x_max {
        let pad = (x_max - data_min) * 0.03;
        data_min - pad
    } else {
        data_min.min(0.0)
    };
    let x_max = if data_min > 0.2 * x_max {
        x_max + (x_max - data_min) * 0.03
    } else {
        x_max
    };
    let y_top = y_max.unwrap_or_else(|| nice_ceiling(all().map(|p| p.1).fold(0.0, f64::max) * 1.1));
    let x_max = if x_max > x_min { x_max } else { x_min + 1.0 };
    let legend_at = emptiest_corner(lines, (x_min, x_max), (0.0, y_top));
    svg(|root| {
        let mut chart = builder(root).build_cartesian_2d(x_min..x_max, 0f64..y_top)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .label_style(font())
            .light_line_style(WHITE)
            .draw()?;
        draw_lines(&mut chart, lines, true, legend_at)
    })
}

/// Grouped bars: for each group (x label), one bar per series value
/// (`None`: no bar). `names` label the series.
fn grouped_bars(
    groups: &[(String, Vec<Option<f64>>)],
    names: &[String],
    y_desc: &str,
    y_top: f64,
) -> PlotResult {
    let per_group = names.len().max(1);
    let width = 0.8 / per_group as f64;
    let categories = Categories::of(groups.iter().map(|g| g.0.as_str()));
    svg(|root| {
        let mut chart = builder(root)
            .x_label_area_size(categories.area())
            .build_cartesian_2d(-0.5f64..(groups.len() as f64 - 0.5).max(0.5), 0f64..y_top)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .x_label_formatter(&|_| String::new())
            .y_desc(y_desc)
            .label_style(font())
            .light_line_style(WHITE)
            .draw()?;
        for (k, name) in names.iter().enumerate() {
            let c = color(k);
            let bars = groups.iter().enumerate().filter_map(|(g, (_, values))| {
                let v = (*values.get(k)?)?;
                let left = g as f64 - 0.4 + k as f64 * width;
                Some(Rectangle::new(
                    [(left, 0.0), (left + width * 0.9, v)],
                    c.filled(),
                ))
            });
            chart
                .draw_series(bars)?
                .label(label(name))
                .legend(move |(x, y)| {
                    Rectangle::new(
                        [(x, y - 5), (x + 14, y + 5)],
                        c.mix(LEGEND_OPACITY).filled(),
                    )
                });
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        categories.draw(root, |x| chart.backend_coord(&(x, 0.0)))
    })
}

/// Grouped bars with the y axis from 0 to a round value above the largest
/// bar (`rtlab hartstone`'s iterations, misses and context switches).
pub fn bars(bars: &crate::series::Bars, y_desc: &str) -> PlotResult {
    let top = bars
        .groups
        .iter()
        .flat_map(|g| g.1.iter().flatten())
        .fold(0.0, |a: f64, &b| a.max(b));
    grouped_bars(
        &bars.groups,
        &bars.names,
        y_desc,
        nice_ceiling((top * 1.25).max(1.0)),
    )
}

/// Paper 000's bars: per period x utilization cell, the share (%) of lags
/// under `threshold_us` (10 or 20), one bar per controller.
pub fn lag_shares(bars: &[LagBar], threshold_us: u32) -> PlotResult {
    let mut controllers: Vec<String> = Vec::new();
    let mut cells: Vec<(u64, u64)> = Vec::new();
    for b in bars {
        if !controllers.contains(&b.controller) {
            controllers.push(b.controller.clone());
        }
        let cell = (b.period_ns, (b.utilization * 1000.0).round() as u64);
        if !cells.contains(&cell) {
            cells.push(cell);
        }
    }
    let groups: Vec<(String, Vec<Option<f64>>)> = cells
        .iter()
        .map(|&(period, permille)| {
            let values = controllers
                .iter()
                .map(|c| {
                    bars.iter()
                        .find(|b| {
                            b.period_ns == period
                                && (b.utilization * 1000.0).round() as u64 == permille
                                && &b.controller == c
                        })
                        .map(|b| {
                            100.0
                                * if threshold_us <= 10 {
                                    b.below_10us
                                } else {
                                    b.below_20us
                                }
                        })
                })
                .collect();
            (
                format!("{} {}%", duration_label(period), permille as f64 / 10.0),
                values,
            )
        })
        .collect();
    grouped_bars(
        &groups,
        &controllers,
        &format!("lags under {threshold_us} us (%)"),
        110.0,
    )
}

/// Real against simulated response times per task: mean and max, each
/// task's bars as a percentage of its own largest value (named under the
/// task), so a 0.3 ms task is as readable as a 30 ms one.
pub fn real_vs_sim(rows: &[RealVsSim]) -> PlotResult {
    let groups: Vec<(String, Vec<Option<f64>>)> = rows
        .iter()
        .map(|r| {
            let values = [r.real_mean_ns, r.sim_mean_ns, r.real_max_ns, r.sim_max_ns];
            let largest = values.iter().flatten().copied().max().unwrap_or(0);
            let scale = |v: Option<u64>| {
                v.filter(|_| largest > 0)
                    .map(|ns| ns as f64 * 100.0 / largest as f64)
            };
            (
                format!("{} ({})", r.task, crate::human::duration_ns(largest as f64)),
                values.iter().map(|&v| scale(v)).collect(),
            )
        })
        .collect();
    let names = ["real mean", "sim mean", "real max", "sim max"].map(String::from);
    grouped_bars(
        &groups,
        &names,
        "% of the task's largest response time",
        150.0,
    )
}

/// Worst-case response times (bars, one colour per policy) against each
/// task's deadline (a black tick), in ms on a log scale.
pub fn response_bounds(bounds: &[ResponseBound]) -> PlotResult {
    let mut tasks: Vec<(String, u64)> = Vec::new();
    let mut policies: Vec<String> = Vec::new();
    for b in bounds {
        if !tasks.iter().any(|t| t.0 == b.task) {
            tasks.push((b.task.clone(), b.deadline_ns));
        }
        if !policies.contains(&b.policy) {
            policies.push(b.policy.clone());
        }
    }
    let ms = |ns: u64| ns as f64 / 1e6;
    let all = bounds
        .iter()
        .flat_map(|b| [b.wcrt_ns, Some(b.deadline_ns)])
        .flatten()
        .map(ms);
    let low = all.clone().fold(f64::INFINITY, f64::min).max(1e-6);
    let top = nice_ceiling(all.fold(0.0, f64::max) * 1.5);
    let bottom = low / 2.0;
    let width = 0.8 / policies.len().max(1) as f64;
    let categories = Categories::of(tasks.iter().map(|t| t.0.as_str()));
    svg(|root| {
        let mut chart = builder(root)
            .x_label_area_size(categories.area())
            .build_cartesian_2d(
                -0.5f64..(tasks.len() as f64 - 0.5).max(0.5),
                (bottom..top).log_scale(),
            )?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .x_label_formatter(&|_| String::new())
            .y_desc("time (ms, log)")
            .label_style(font())
            .light_line_style(WHITE)
            .draw()?;
        for (k, policy) in policies.iter().enumerate() {
            let c = color(k);
            let bars = bounds
                .iter()
                .filter(|b| &b.policy == policy)
                .filter_map(|b| {
                    let g = tasks.iter().position(|t| t.0 == b.task)? as f64;
                    let left = g - 0.4 + k as f64 * width;
                    Some(Rectangle::new(
                        [(left, bottom), (left + width * 0.9, ms(b.wcrt_ns?))],
                        c.filled(),
                    ))
                });
            chart
                .draw_series(bars)?
                .label(format!("R ({})", label(policy)))
                .legend(move |(x, y)| {
                    Rectangle::new(
                        [(x, y - 5), (x + 14, y + 5)],
                        c.mix(LEGEND_OPACITY).filled(),
                    )
                });
        }
        chart
            .draw_series(tasks.iter().enumerate().map(|(g, (_, d))| {
                let g = g as f64;
                PathElement::new(
                    vec![(g - 0.45, ms(*d)), (g + 0.45, ms(*d))],
                    BLACK.stroke_width(3),
                )
            }))?
            .label("deadline D")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(3)));
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        categories.draw(root, |x| chart.backend_coord(&(x, bottom)))
    })
}

/// Breakdown utilization (%) against the tick (ms; 0 = tickless), one
/// line per policy with overheads, and each policy's ideal as a dashed
/// level.
pub fn breakdown(data: &Breakdown) -> PlotResult {
    let x_max = data
        .curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.0))
        .fold(1.0, f64::max);
    let mut lines: Vec<Line> = data
        .curves
        .iter()
        .map(|c| Line {
            label: c.label.clone(),
            points: c.points.iter().map(|&(x, u)| (x, u * 100.0)).collect(),
        })
        .collect();
    for (policy, u) in &data.ideal {
        lines.push(Line {
            label: format!("{policy} ideal"),
            points: vec![(0.0, u * 100.0), (x_max, u * 100.0)],
        });
    }
    self::lines(
        &lines,
        "tick (ms; 0 = tickless)",
        "breakdown utilization (%)",
        Some(110.0),
    )
}

/// Breakdown utilization (%) against the time scale (paper 004's
/// predicted-versus-measured figure): one line per breakdown, dots at the
/// scales measured.
pub fn breakdown_vs_time_scale(series: &[Line]) -> PlotResult {
    let lines: Vec<Line> = series
        .iter()
        .map(|l| Line {
            label: l.label.clone(),
            points: l.points.iter().map(|&(x, u)| (x, u * 100.0)).collect(),
        })
        .collect();
    self::lines(
        &lines,
        "time scale (x every period, deadline and C)",
        "breakdown utilization (%)",
        Some(110.0),
    )
}

/// The jobs of a run: per task (or, on m processors, per processor) a
/// lane, coloured by task; each job a thin window from release
/// to deadline, a bar from start to finish (red when it missed, hatched
/// to the end when unfinished), a tick at the release, and its preemption
/// count above it when there is room.
pub fn gantt(g: &Gantt) -> PlotResult {
    let ms = |ns: u64| ns as f64 / 1e6;
    let lanes = g.lanes.len().max(1);
    let y = |lane: usize| (lanes - 1 - lane) as f64;
    let end = ms(g.end_ns).max(1e-3);
    let show_counts = g.bars.len() <= 120;
    svg(|root| {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(140)
            .build_cartesian_2d(0f64..end * 1.02, -0.6f64..(lanes as f64 - 0.4))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .y_label_formatter(&|_| String::new())
            .x_desc("time (ms)")
            .label_style(font())
            .light_line_style(WHITE)
            .draw()?;
        let window = g.bars.iter().map(|b| {
            let yy = y(b.lane);
            Rectangle::new(
                [
                    (ms(b.row.release_ns), yy - 0.08),
                    (ms(b.row.deadline_ns), yy + 0.08),
                ],
                color(b.task).mix(0.25).filled(),
            )
        });
        chart.draw_series(window)?;
        let run = g.bars.iter().filter_map(|b| {
            let start = ms(b.row.start_ns?);
            let finish = b.row.finish_ns.map_or(end, ms);
            let yy = y(b.lane);
            let style = if b.missed { MISSED } else { color(b.task) };
            Some(Rectangle::new(
                [(start, yy - 0.3), (finish.max(start), yy + 0.3)],
                style.filled(),
            ))
        });
        chart.draw_series(run)?;
        let missed = g.bars.iter().filter(|b| b.missed);
        chart.draw_series(missed.clone().filter_map(|b| {
            let start = ms(b.row.start_ns?);
            let finish = b.row.finish_ns.map_or(end, ms);
            let yy = y(b.lane);
            Some(Rectangle::new(
                [(start, yy - 0.3), (finish.max(start), yy + 0.3)],
                BLACK.stroke_width(2),
            ))
        }))?;
        chart.draw_series(missed.map(|b| {
            Cross::new(
                (ms(b.row.deadline_ns), y(b.lane) + 0.42),
                5,
                BLACK.stroke_width(2),
            )
        }))?;
        let releases = g.bars.iter().map(|b| {
            let yy = y(b.lane);
            PathElement::new(
                vec![
                    (ms(b.row.release_ns), yy - 0.4),
                    (ms(b.row.release_ns), yy + 0.4),
                ],
                color(b.task).stroke_width(2),
            )
        });
        chart.draw_series(releases)?;
        if show_counts {
            let style = ("sans-serif", 11)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Bottom));
            let counts = g
                .bars
                .iter()
                .filter(|b| b.row.preemptions > 0)
                .filter_map(|b| {
                    Some(Text::new(
                        format!("{}p", b.row.preemptions),
                        (ms(b.row.start_ns?), y(b.lane) + 0.32),
                        style.clone(),
                    ))
                });
            chart.draw_series(counts)?;
        }
        let style = font().pos(Pos::new(HPos::Right, VPos::Center));
        for (lane, name) in g.lanes.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(0.0, y(lane)));
            root.draw(&Text::new(label(name), (px - 8, py), style.clone()))?;
        }
        Ok(())
    })
}

/// Another thread on the CPU (greys and a pale red: no series colour).
pub const OTHER_THREAD: RGBColor = RGBColor(0xa0, 0xa0, 0xa0);
/// An interrupt handler or softirq.
pub const INTERRUPT: RGBColor = RGBColor(0x30, 0x30, 0x30);
/// A task of the set throttled (runnable, switched out, its CPU idle or
/// running a lower class).
pub const THROTTLED: RGBColor = RGBColor(0xff, 0x98, 0x96);
/// Scheduling overheads in the simulator.
pub const OVERHEAD: RGBColor = RGBColor(0x60, 0x60, 0x60);
/// A job resuming on another processor (a dot where it resumes).
pub const MIGRATION: RGBColor = RGBColor(0x55, 0x00, 0x88);

/// Misses labelled with their cause at most; past that, the crosses alone
/// (the caption and the legend say what they mean).
const MAX_MISS_LABELS: usize = 12;

/// The one drawing of a schedule window, a lane per row: a real run's
/// kernel schedule above the simulated one (`real CPU 1`, its interrupts,
/// a task's throttled spans, `sim CPU 1`; [`crate::series::schedule_chart`])
/// or the simulator's own window (`rtlab sim --gantt`: a row per task, or
/// per processor; [`crate::series::window_chart`]). The set's jobs are in
/// their task's colour, other threads grey, interrupts near black,
/// throttling pale red, simulated overheads dark grey, each release a tick
/// in its task's colour, each migration a dot where the job resumes, and
/// each deadline miss a red cross at the deadline labelled with the largest
/// cause of its lateness (or the job).
pub fn schedule(c: &ScheduleChart) -> PlotResult {
    let ms = |ns: u64| ns as f64 / 1e6;
    let lanes = c.lanes.len().max(1);
    let y = |lane: usize| (lanes - 1 - lane) as f64;
    let (from, to) = (ms(c.from_ns), ms(c.to_ns.max(c.from_ns + 1000)));
    svg(|root| {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(170)
            .build_cartesian_2d(from..to + (to - from) * 0.45, -0.6f64..(lanes as f64 - 0.4))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .y_label_formatter(&|_| String::new())
            .x_desc("time since the run's start (ms)")
            .label_style(font())
            .light_line_style(WHITE)
            .draw()?;
        let bar = |lane: usize, start: u64, end: u64, colour: RGBColor| {
            let yy = y(lane);
            Rectangle::new(
                [(ms(start), yy - 0.3), (ms(end), yy + 0.3)],
                colour.filled(),
            )
        };
        let sample = |colour: RGBColor| {
            move |(x, y): (i32, i32)| {
                Rectangle::new(
                    [(x, y - 5), (x + 14, y + 5)],
                    colour.mix(LEGEND_OPACITY).filled(),
                )
            }
        };
        for (t, name) in c.tasks.iter().enumerate() {
            let jobs = c
                .spans
                .iter()
                .filter(|(_, task, _)| *task == Some(t))
                .map(|(lane, _, s)| bar(*lane, s.start_ns, s.end_ns, color(t)));
            chart
                .draw_series(jobs)?
                .label(label(name))
                .legend(sample(color(t)));
        }
        for (kind, colour, name) in [
            (SpanKind::Other, OTHER_THREAD, "other thread"),
            (SpanKind::Irq, INTERRUPT, "interrupt"),
            (SpanKind::Throttled, THROTTLED, "throttled"),
            (SpanKind::Overhead, OVERHEAD, "sim overheads"),
        ] {
            let mut of_kind = c.spans.iter().filter(|(_, _, s)| s.kind == kind).peekable();
            if of_kind.peek().is_none() {
                continue;
            }
            let bars = of_kind.map(|(lane, _, s)| bar(*lane, s.start_ns, s.end_ns, colour));
            chart.draw_series(bars)?.label(name).legend(sample(colour));
        }
        // Releases: a tick on their task's row, in its colour.
        let colour_of = |label: &str| {
            c.tasks
                .iter()
                .position(|t| t == label)
                .map_or(OTHER_THREAD, color)
        };
        chart.draw_series(
            c.spans
                .iter()
                .filter(|(_, _, s)| s.kind == SpanKind::Release)
                .map(|(lane, _, s)| {
                    let yy = y(*lane);
                    PathElement::new(
                        vec![(ms(s.start_ns), yy - 0.4), (ms(s.start_ns), yy + 0.4)],
                        colour_of(&s.label).stroke_width(2),
                    )
                }),
        )?;
        let mut migrations = c
            .spans
            .iter()
            .filter(|(_, _, s)| s.kind == SpanKind::Migration)
            .peekable();
        if migrations.peek().is_some() {
            chart
                .draw_series(migrations.map(|(lane, _, s)| {
                    Circle::new((ms(s.start_ns), y(*lane)), 4, MIGRATION.filled())
                }))?
                .label("migration")
                .legend(|(x, y)| {
                    Circle::new((x + 7, y), 4, MIGRATION.mix(LEGEND_OPACITY).filled())
                });
        }
        let misses: Vec<_> = c
            .spans
            .iter()
            .filter(|(_, _, s)| s.kind == SpanKind::Miss)
            .collect();
        if !misses.is_empty() {
            chart
                .draw_series(misses.iter().map(|(lane, _, s)| {
                    Cross::new((ms(s.start_ns), y(*lane) + 0.38), 6, MISSED.stroke_width(3))
                }))?
                .label("deadline miss")
                .legend(|(x, y)| {
                    Cross::new((x + 7, y), 5, MISSED.mix(LEGEND_OPACITY).stroke_width(3))
                });
            if misses.len() <= MAX_MISS_LABELS {
                let style = ("sans-serif", 11)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Left, VPos::Bottom));
                chart.draw_series(misses.iter().map(|(lane, _, s)| {
                    Text::new(
                        label(&shortened(&s.label, 40)),
                        (ms(s.start_ns), y(*lane) + 0.45),
                        style.clone(),
                    )
                }))?;
            }
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        let style = font().pos(Pos::new(HPos::Right, VPos::Center));
        for (lane, name) in c.lanes.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(from, y(lane)));
            root.draw(&Text::new(
                label(&shortened(name, 24)),
                (px - 8, py),
                style.clone(),
            ))?;
        }
        Ok(())
    })
}

/// `text` cut to `max` characters by an ellipsis in the middle, so names
/// that share a prefix (`display-graphic`, `display-hook-update`) keep
/// their distinct ends.
fn shortened(text: &str, max: usize) -> String {
    let n = text.chars().count();
    if n <= max {
        return text.to_string();
    }
    let keep = max.saturating_sub(1);
    let head = keep.div_ceil(2);
    let tail = keep - head;
    let mut out: String = text.chars().take(head).collect();
    out.push('…');
    out.extend(text.chars().skip(n - tail));
    out
}

/// `1ms`, `10ms`, `250us`: a period for a label.
fn duration_label(ns: u64) -> String {
    if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns.is_multiple_of(1000) {
        format!("{}us", ns / 1000)
    } else {
        format!("{ns}ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_ends_are_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(nice_ceiling(0.0), 1.0);
        assert_eq!(nice_ceiling(3.0), 5.0);
        assert_eq!(nice_ceiling(11.0), 20.0);
        assert_eq!(nice_ceiling(1000.0), 1000.0);
    }

    #[test]
    fn histogram_steps_drop_to_the_floor_between_gaps() {
        assert_eq!(
            steps(&[(3, 5), (4, 2), (7, 1)], 0.5),
            vec![
                (3.0, 0.5),
                (3.0, 5.0),
                (4.0, 5.0),
                (4.0, 2.0),
                (5.0, 2.0),
                (5.0, 0.5),
                (7.0, 0.5),
                (7.0, 1.0),
                (8.0, 1.0),
                (8.0, 0.5)
            ]
        );
        assert!(steps(&[], 0.5).is_empty());
    }

    /// Issue 36: the avionics set's names were cut to `dis…ate` three
    /// times under the response-time bars.
    #[test]
    fn category_names_that_do_not_fit_stand_upright_and_stay_distinct() {
        let set = rtlab_model::file::load("builtin:avionics").unwrap().set;
        let names: Vec<&str> = set.tasks.iter().map(|t| t.name.as_str()).collect();
        let c = Categories::of(names.iter().copied());
        assert!(c.upright);
        for (i, a) in c.names.iter().enumerate() {
            assert!(a.chars().count() <= UPRIGHT_CHARS, "{a}");
            for b in &c.names[..i] {
                assert_ne!(a, b, "two names read alike: {:?}", c.names);
            }
        }
        assert!(c.area() > 40 && c.area() < SIZE.1 / 2);
        let short = Categories::of(["t1", "t2", "t3"].into_iter());
        assert!(!short.upright);
        assert_eq!(short.names, ["t1", "t2", "t3"]);
        // A cut that would make two names alike keeps more of them.
        let long = ["display-stores-update", "display-stat-update"].map(String::from);
        let cut = distinct_shortened(&long, 8);
        assert_ne!(cut[0], cut[1]);
    }

    #[test]
    fn long_category_names_are_cut_with_an_ellipsis() {
        assert_eq!(shortened("radar-tracking-filter", 6), "rad…er");
        assert_ne!(
            shortened("display-graphic", 8),
            shortened("display-hook-update", 8)
        );
        assert_eq!(shortened("t1", 6), "t1");
    }

    #[test]
    fn periods_are_labelled_in_their_unit() {
        assert_eq!(duration_label(10_000_000), "10ms");
        assert_eq!(duration_label(250_000), "250us");
        assert_eq!(duration_label(1_500), "1500ns");
    }
}
