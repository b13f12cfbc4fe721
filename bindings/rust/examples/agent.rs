//! A small agent host: the "model" is a script of cells, as a tool-calling
//! loop would send them. It uploads a CSV, runs the cells one by one with
//! their output streamed, answers each with what an agent would be shown
//! (stdout, the value, the error), and copies the chart and the report the
//! session wrote out of it.
//!
//!     cargo run --example agent [OUTPUT_DIR]     (default: the temp dir)
use codeinterp::{Config, RunOptions, Session, Status, Stream};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

const SALES: &str = "month,region,units\n\
2024-01,north,120\n2024-01,south,95\n2024-02,north,134\n2024-02,south,88\n\
2024-03,north,150\n2024-03,south,110\n2024-04,north,141\n2024-04,south,131\n";

/// What the scripted model asks for, in order.
const CELLS: &[&str] = &[
    "import pandas as pd\ndf = pd.read_csv('sales.csv')\ndf.groupby('region').units.sum()",
    "by_month = df.pivot(index='month', columns='region', values='units')\n\
     growth = by_month.pct_change().mul(100).round(1)\n\
     print(growth.dropna())",
    // A mistake the agent then sees and fixes, as a model would.
    "df['revenue'] = df.units * price",
    "price = 12.5\ndf['revenue'] = df.units * price\ndf.revenue.sum()",
    "import matplotlib.pyplot as plt\n\
     ax = by_month.plot(marker='o', title='Units by region')\n\
     ax.set_ylabel('units')\n\
     plt.savefig('units.png', dpi=80)\n\
     report = '# Units by month\\n\\n' + by_month.to_string() + '\\n'\n\
     open('report.md', 'w').write(report)\n\
     'saved'",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out_dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);

    let mut session = Session::new(
        Config::new()
            .timeout(Duration::from_secs(30))
            .memory_limit(1 << 30)
            .figure_dpi(72),
    )?;
    println!(
        "session: worker pid {}, workspace {}, codeinterp {}",
        session.pid().unwrap_or(0),
        session.workspace().display(),
        codeinterp::version()
    );
    session.put_file("sales.csv", SALES.as_bytes())?;

    for (i, cell) in CELLS.iter().enumerate() {
        println!("\nIn [{}]:", i + 1);
        for line in cell.lines() {
            println!("    {}", line);
        }
        // Stream what the cell prints while it runs, as a UI would.
        let mut show = |stream: Stream, chunk: &[u8]| {
            let text = String::from_utf8_lossy(chunk);
            match stream {
                Stream::Stdout => print!("{}", text),
                Stream::Stderr => eprint!("{}", text),
            }
            let _ = std::io::stdout().flush();
        };
        let r = session.run_with(cell, RunOptions::new().on_output(&mut show))?;

        // What the model would be sent back as the tool's answer.
        match r.status {
            Status::Ok => {
                if let Some(v) = &r.value {
                    println!("Out[{}]: {}", r.execution_count, v);
                }
            }
            Status::Killed => {
                let e = r.error.as_ref().map(|e| e.value.as_str()).unwrap_or("");
                println!("the worker died ({}); restarting", e);
                session.restart()?;
            }
            _ => {
                if let Some(e) = &r.error {
                    println!("{}: {}", e.name, e.value);
                }
            }
        }
        // Each message's representations come richest first: a notebook
        // (or a multimodal model) is shown the first one.
        let mut last_message = None;
        for o in &r.outputs {
            if last_message != Some(o.message) {
                last_message = Some(o.message);
                println!("[{} output: {} bytes]", o.mime, o.data.len());
            }
        }
        for f in &r.files {
            println!("[wrote {}]", f.display());
        }
        println!(
            "({:.1} ms wall, {:.1} ms cpu, peak {} MiB)",
            r.wall_time.as_secs_f64() * 1e3,
            r.cpu_time.as_secs_f64() * 1e3,
            r.peak_memory >> 20
        );
    }

    println!();
    for name in ["units.png", "report.md"] {
        let data = session.get_file(name)?;
        let dest = out_dir.join(name);
        std::fs::write(&dest, &data)?;
        println!("copied {} ({} bytes) -> {}", name, data.len(), dest.display());
    }
    Ok(())
}
