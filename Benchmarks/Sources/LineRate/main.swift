import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The download module at line rate, measured as a user would see it: one file from a local nginx (sendfile, not
// throttled), fetched by each client in a process of its own — curl, aria2c, a bare Foundation download task (the
// floor on this platform: every URLSession download pays it) and this library's downloads — side by side in one
// run, rounds interleaved (round 1: every client, round 2: every client…). It prints, per client, the median over
// the rounds of the wall time, the speed, and the CPU time (user + system, of that process alone, from `wait4`) per
// GiB, with both as multiples of the bare download task's. Each downloaded file is checked by the harness after the
// client has exited, so the check costs the client nothing: its size, then its SHA-256; a mismatch, or a client that
// fails, fails the run.
//
// The segmented rows ask the same server on three loopback addresses (Linux answers on all of 127.0.0.0/8; macOS
// only on 127.0.0.1, so there all three are the same address): what three mirrors cost when bandwidth is not the
// limit, with every segment of the default 1 MiB a request of its own.
//
// Usage: line-rate [rounds] [size in MiB]
//        swift run -c release --package-path Benchmarks line-rate 3 512

let arguments = Array(CommandLine.arguments.dropFirst())
let rounds = max(1, arguments.first.flatMap(Int.init) ?? 3)
let sizeMiB = max(1, arguments.dropFirst().first.flatMap(Int.init) ?? 512)
let fileSize = sizeMiB * 1_048_576
/// The piece length of the piece-checked segmented row: what a Metalink file for a file this size would list.
let pieceLength = 1_048_576

/// Where the file, nginx's configuration and the downloads go; removed when the run ends, however it ends.
let work = FileManager.default.temporaryDirectory.appendingPathComponent("line-rate-\(UUID())")

func fail(_ message: String, stopping server: Child? = nil) -> Never {
    print("line-rate: \(message)")
    server?.stop()
    try? FileManager.default.removeItem(at: work)
    exit(1)
}

let nginxCandidates = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/bin/nginx", "/opt/homebrew/bin/nginx"]
guard let nginx = executable(nginxCandidates) else {
    fail(
        "nginx not found. Install it: apt-get install nginx-light (Debian, Ubuntu), brew install nginx (macOS); "
            + "line-rate starts and stops its own, on a free port, as the user running it"
    )
}
let curl = executable(["/usr/bin/curl", "/usr/local/bin/curl", "/opt/homebrew/bin/curl"])
let aria2 = executable(["/usr/bin/aria2c", "/usr/local/bin/aria2c", "/opt/homebrew/bin/aria2c"])
let sha256Command =
    executable(["/usr/bin/sha256sum", "/usr/local/bin/sha256sum"]).map { [$0] } ?? ["/usr/bin/shasum", "-a", "256"]
let split = executable(["/usr/bin/split", "/bin/split"]) ?? "/usr/bin/split"
// Built with this executable, which depends on its target for that reason.
let clientPath =
    Bundle.main.executableURL?.deletingLastPathComponent().appendingPathComponent("download-client").path ?? ""
guard FileManager.default.isExecutableFile(atPath: clientPath) else {
    fail("download-client not found next to line-rate: swift build -c release --package-path Benchmarks")
}

#if os(Linux)
let hosts = ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
#else
let hosts = ["127.0.0.1", "127.0.0.1", "127.0.0.1"]
#endif

let www = work.appendingPathComponent("www")
let source = www.appendingPathComponent("file.bin")
try FileManager.default.createDirectory(at: www, withIntermediateDirectories: true)

/// The SHA-256 of each file in `paths`, lowercase hex, by `sha256sum` (the library has no public SHA-256).
func sha256(of paths: [String]) -> [String] {
    let output = work.appendingPathComponent("sha256.txt").path
    guard (try? run(sha256Command + paths, output: output))?.status == 0,
        let text = try? String(contentsOfFile: output, encoding: .utf8)
    else { fail("\(sha256Command.joined(separator: " ")) failed") }
    let digests = text.split(whereSeparator: \.isNewline).map { String($0.prefix(64)) }
    guard digests.count == paths.count else { fail("\(sha256Command[0]) printed \(digests.count) digests") }
    return digests
}

// The file: random, so that nothing on the way can compress it.
do {
    guard FileManager.default.createFile(atPath: source.path, contents: nil) else {
        fail("cannot write \(source.path)")
    }
    let random = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom"))
    let file = try FileHandle(forWritingTo: source)
    for _ in 0..<sizeMiB { try file.write(contentsOf: random.read(upToCount: 1_048_576) ?? Data()) }
    try file.close()
    try random.close()
}
let digest = sha256(of: [source.path])[0]
// The pieces' digests, one a line, as the segmented client reads them: cut the file with `split` and hash the parts.
let piecesFile = work.appendingPathComponent("pieces.txt")
do {
    let parts = work.appendingPathComponent("parts")
    try FileManager.default.createDirectory(at: parts, withIntermediateDirectories: true)
    let prefix = parts.appendingPathComponent("part.").path
    guard (try? run([split, "-a", "6", "-b", "\(pieceLength)", source.path, prefix]))?.status == 0 else {
        fail("split failed")
    }
    let names = try FileManager.default.contentsOfDirectory(atPath: parts.path).sorted()
    let digests = sha256(of: names.map { parts.appendingPathComponent($0).path })
    try (digests.joined(separator: "\n") + "\n").write(to: piecesFile, atomically: true, encoding: .utf8)
    try FileManager.default.removeItem(at: parts)
}

// nginx, as the user running this: its own configuration, pid file, logs and temporary folders in `work`; in the
// foreground and without a master process, so that it is one child, stopped with one signal. One worker, as a
// small server has; sendfile on; no access log, no rate limit.
guard let port = freePort() else { fail("no free port") }
let configuration = work.appendingPathComponent("nginx.conf")
let temporary = ["body", "proxy", "fastcgi", "uwsgi", "scgi"].map { name in
    "\(name == "body" ? "client_body" : name)_temp_path \(work.path)/nginx-\(name);"
}
try """
daemon off;
master_process off;
worker_processes 1;
pid \(work.path)/nginx.pid;
error_log \(work.path)/nginx-error.log warn;
events { worker_connections 256; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    default_type application/octet-stream;
    \(temporary.joined(separator: "\n    "))
    server {
        \(Set(hosts).sorted().map { "listen \($0):\(port);" }.joined(separator: "\n        "))
        root \(www.path);
    }
}

""".write(to: configuration, atomically: true, encoding: .utf8)
let server = try Child([nginx, "-p", work.path, "-c", configuration.path, "-e", "\(work.path)/nginx-error.log"])
let deadline = ContinuousClock.now + .seconds(10)
while !hosts.allSatisfy({ accepts(host: $0, port: port) }) {
    guard ContinuousClock.now < deadline else {
        let log = (try? String(contentsOf: work.appendingPathComponent("nginx-error.log"), encoding: .utf8)) ?? ""
        fail("nginx did not start listening on port \(port):\n\(log)", stopping: server)
    }
    usleep(20_000)
}
let urls = hosts.map { "http://\($0):\(port)/file.bin" }

/// One row of the table: a client, and the command that runs it to write the file at the path it is given.
struct Row: Sendable {
    let name: String
    let command: @Sendable (String) -> [String]

    /// The download client, of kind `kind`.
    static func client(_ name: String, _ kind: String, _ urls: [String], _ options: [String] = []) -> Row {
        Row(name: name) { out in [clientPath, "--kind", kind, "--out", out] + options + urls }
    }
}

var rows: [Row] = []
if let curl {
    rows.append(Row(name: "curl") { [curl, "-s", "-o", $0, urls[0]] })
}
if let aria2 {
    for connections in [1, 3] {
        rows.append(
            Row(name: "aria2c, \(connections) connection\(connections == 1 ? "" : "s")") { out in
                let file = URL(fileURLWithPath: out)
                return [
                    aria2, "-q", "-x", "\(connections)", "-s", "\(connections)", "--file-allocation=none",
                    "-d", file.deletingLastPathComponent().path, "-o", file.lastPathComponent, urls[0],
                ]
            }
        )
    }
}
let plainRow = "URLSession download task (plain)"
let sha256Options = ["--sha256", digest]
let pieceOptions = [
    "--length", "\(fileSize)", "--piece-length", "\(pieceLength)", "--pieces-file", piecesFile.path,
]
rows += [
    .client(plainRow, "plain", [urls[0]]),
    .client("URLSession data task writing each piece (plain)", "plain-data", [urls[0]]),
    .client("cancellableDownload", "cancellable", [urls[0]]),
    .client("cancellableDownload + sha256", "cancellable-sha256", [urls[0]], sha256Options),
    .client("cancellableDownload + 1 MiB pieces", "cancellable-pieces", [urls[0]], pieceOptions),
    .client("resumableDownload", "resumable", [urls[0]]),
    .client("segmentedDownload, 3 addresses", "segmented", urls),
    .client("segmentedDownload, 3 addresses + 1 MiB pieces", "segmented-pieces", urls, pieceOptions),
    .client("segmentedDownload, 3 addresses + sha256", "segmented-sha256", urls, sha256Options),
]

let cores = ProcessInfo.processInfo.activeProcessorCount
print(
    "\(sizeMiB) MiB from a local nginx (sendfile, not throttled), port \(port); "
        + "median of \(rounds) interleaved rounds; \(cores) cores; CPU = user + sys of the client's process"
)
if curl == nil { print("(curl not found: install the Debian package curl to compare with it)") }
if aria2 == nil { print("(aria2c not found: install the Debian package aria2 to compare with it)") }

let started = ContinuousClock.now
var exits: [String: [Exit]] = [:]
for round in 1...rounds {
    for row in rows {
        // A folder per download: whatever a client leaves beside its file (aria2's control file, a partial file)
        // goes with it.
        let folder = work.appendingPathComponent("round-\(round)-\(exits[row.name, default: []].count)-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let out = folder.appendingPathComponent("file.bin").path
        let ended = try Child(row.command(out)).wait()
        guard ended.status == 0 else { fail("\(row.name) exited with \(ended.status)", stopping: server) }
        let size = (try? FileManager.default.attributesOfItem(atPath: out)[.size] as? Int) ?? nil
        guard size == fileSize else {
            fail("\(row.name): the file has \(size.map(String.init) ?? "no") bytes, not \(fileSize)", stopping: server)
        }
        guard sha256(of: [out])[0] == digest else {
            fail("\(row.name): the file does NOT match the source (SHA-256)", stopping: server)
        }
        try FileManager.default.removeItem(at: folder)
        exits[row.name, default: []].append(ended)
    }
}
server.stop()
try? FileManager.default.removeItem(at: work)
let elapsed = (ContinuousClock.now - started) / .seconds(1)

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}

let gib = Double(fileSize) / 1_073_741_824
let floorWall = median(exits[plainRow, default: []].map(\.seconds))
let floorCPU = median(exits[plainRow, default: []].map(\.cpuSeconds)) / gib
print(String(format: "every file checked (size and SHA-256); %d downloads in %.0f s\n", rows.count * rounds, elapsed))
print("| Client | Wall (median) | MiB/s | CPU s per GiB | × plain URLSession (CPU) | wall × plain URLSession |")
print("|---|---:|---:|---:|---:|---:|")
for row in rows {
    let wall = median(exits[row.name, default: []].map(\.seconds))
    let cpu = median(exits[row.name, default: []].map(\.cpuSeconds)) / gib
    print(
        "| \(row.name) | "
            + String(
                format: "%.2f s | %.0f | %.2f | %.2f | %.2f |",
                wall,
                Double(sizeMiB) / wall,
                cpu,
                cpu / floorCPU,
                wall / floorWall
            )
    )
}
