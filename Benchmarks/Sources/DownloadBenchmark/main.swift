import Cancellable
import CancellableURLSession
import Foundation
import MirrorServer
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// One file from three throttled local mirrors (4, 2 and 1 MiB/s by default), each on a server of its own (aria2
// counts connections per server), fetched three ways in one run, interleaved round by round:
//
//   race       one download per mirror, `some(1, …, autoCancel: true)`: the first to finish wins, the rest stop
//   segmented  `URLSession.segmentedDownload`, every mirror at once
//   aria2c     aria2's own segmented download (Debian package `aria2`), `-s <mirrors> -x 1 -k <segment>`
//
// in two scenarios: every mirror healthy, and the second-fastest going down half-way through its share (its
// connection closes mid-body, later requests get 503). It prints, per scenario and contestant, the median over the
// rounds of the wall time as a fraction of the ideal (every mirror busy all the time: file size ÷ the sum of the
// mirrors' speeds, less what the dying mirror could add; above 100% is impossible) and the bytes the servers sent
// that are not in the file. Each downloaded file is compared with the source byte for byte; a mismatch fails the
// run.
//
// Usage: download-benchmark [rounds] [size in MiB] [speeds in KiB/s …]
//        swift run -c release --package-path Benchmarks download-benchmark 5 8 4096 2048 1024

let arguments = Array(CommandLine.arguments.dropFirst())
let rounds = arguments.first.flatMap(Int.init) ?? 5
let fileSize = Int((arguments.dropFirst().first.flatMap(Double.init) ?? 8) * 1_048_576)
let kibPerSecond =
    arguments.dropFirst(2).compactMap(Int.init).isEmpty
    ? [4_096, 2_048, 1_024] : arguments.dropFirst(2).compactMap(Int.init)
let segmentSize = 1_048_576  // aria2's smallest -k
/// How many bytes mirror 1 sends before it goes down, in the second scenario: half its share of the file.
let dyingMirrorSends = fileSize * kibPerSecond[1] / kibPerSecond.reduce(0, +) / 2
let aria2 = ["/usr/bin/aria2c", "/usr/local/bin/aria2c", "/opt/homebrew/bin/aria2c"].first {
    FileManager.default.isExecutableFile(atPath: $0)
}

/// A loopback address per mirror, so that each is a server of its own to aria2 (which counts connections per host,
/// whatever the port): Linux answers on all of 127.0.0.0/8; macOS only on 127.0.0.1 unless given aliases.
#if os(Linux)
let hosts = kibPerSecond.indices.map { "127.0.0.\($0 + 1)" }
#else
let hosts = kibPerSecond.indices.map { _ in "127.0.0.1" }
#endif

enum Scenario: String, CaseIterable {
    case healthy = "every mirror healthy"
    case oneDies = "mirror 1 dies half-way"

    /// The fastest any client could be: every mirror busy all the time; mirror 1, in the second scenario, until it
    /// has sent what it sends.
    var ideal: Double {
        let total = Double(kibPerSecond.reduce(0, +) * 1_024)
        switch self {
        case .healthy:
            return Double(fileSize) / total
        case .oneDies:
            return Double(fileSize - dyingMirrorSends) / (total - Double(kibPerSecond[1] * 1_024))
        }
    }
}

enum Contestant: String, CaseIterable {
    case race, segmented, aria2c
}

struct Measurement {
    let seconds: Double
    let discarded: Int
}

/// Servers for one download: mirror `i` is `/mirror/i/file.bin` on a server of its own.
struct Mirrors {
    let servers: [MirrorServer]
    let tasks: [Task<Void, Error>]
    let urls: [URL]

    init(_ scenario: Scenario) async throws {
        var servers: [MirrorServer] = []
        var tasks: [Task<Void, Error>] = []
        var urls: [URL] = []
        for mirror in kibPerSecond.indices {
            let server = MirrorServer(
                fileSize: fileSize,
                bytesPerSecond: kibPerSecond.map { $0 * 1_024 },
                diesAfter: scenario == .oneDies && mirror == 1 ? [1: dyingMirrorSends] : [:]
            )
            let host = hosts[mirror]
            let (port, task) = try await server.start(host: host)
            servers.append(server)
            tasks.append(task)
            urls.append(URL(string: "http://\(host):\(port)/mirror/\(mirror)/file.bin")!)
        }
        (self.servers, self.tasks, self.urls) = (servers, tasks, urls)
    }

    /// Every body byte the servers sent.
    func bytesSent() async -> Int {
        // Let the servers see cancelled connections end: what they sent until then counts.
        try? await Task.sleep(for: .milliseconds(200))
        return servers.indices.map { servers[$0].stats(of: $0).bytesSent }.reduce(0, +)
    }

    func stop() {
        tasks.forEach { $0.cancel() }
    }
}

func run(_ contestant: Contestant, _ scenario: Scenario) async throws -> Measurement? {
    let mirrors = try await Mirrors(scenario)
    defer { mirrors.stop() }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("download-benchmark-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let destination = directory.appendingPathComponent("file.bin")
    let session = URLSession.withProgressReporting(configuration: .ephemeral)
    defer { session.finishTasksAndInvalidate() }

    let started = Date()
    switch contestant {
    case .race:
        let downloads = mirrors.urls.enumerated().map { index, url in
            session.cancellableDownload(from: url, to: directory.appendingPathComponent("race-\(index).bin"))
        }
        let winner = try await some(1, downloads, autoCancel: true).async()
        try FileManager.default.moveItem(at: winner[0].url, to: destination)
    case .segmented:
        var options = SegmentedDownloadOptions()
        options.segmentSize = Int64(segmentSize)
        options.stallTimeout = 2
        _ = try await session.segmentedDownload(from: mirrors.urls, to: destination, options: options).async()
    case .aria2c:
        guard let aria2 else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: aria2)
        process.arguments =
            [
                "-q", "-d", directory.path, "-o", "file.bin", "-s", "\(kibPerSecond.count)", "-x", "1",
                "-k", "\(segmentSize / 1_048_576)M", "--file-allocation=none", "--retry-wait=0",
                "--allow-overwrite=true", "--auto-file-renaming=false",
            ] + mirrors.urls.map(\.absoluteString)
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            print("aria2c exited with \(process.terminationStatus)")
            exit(1)
        }
    }
    let seconds = Date().timeIntervalSince(started)
    guard (try? Data(contentsOf: destination)) == mirrors.servers[0].current.file else {
        print("\(contestant) (\(scenario.rawValue)): the file does NOT match the source")
        exit(1)
    }
    return Measurement(seconds: seconds, discarded: await mirrors.bytesSent() - fileSize)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}

print(
    "\(String(format: "%.0f", Double(fileSize) / 1_048_576)) MiB from mirrors at "
        + kibPerSecond.map { "\($0) KiB/s" }.joined(separator: ", ")
        + String(format: "; median of %d rounds, contestants interleaved", rounds)
)
for scenario in Scenario.allCases {
    print(String(format: "ideal, \(scenario.rawValue): %.2f s", scenario.ideal))
}
if aria2 == nil { print("(aria2c not found: install the Debian package aria2 to compare with it)") }
var results: [Scenario: [Contestant: [Measurement]]] = [:]
for _ in 0..<rounds {
    for scenario in Scenario.allCases {
        for contestant in Contestant.allCases {
            if let measurement = try await run(contestant, scenario) {
                results[scenario, default: [:]][contestant, default: []].append(measurement)
            }
        }
    }
}
print("")
print("| Scenario | Contestant | Time | Of the ideal | Bytes discarded |")
print("|---|---|---|---|---|")
for scenario in Scenario.allCases {
    for contestant in Contestant.allCases {
        guard let measurements = results[scenario]?[contestant] else { continue }
        let seconds = median(measurements.map(\.seconds))
        let discarded = median(measurements.map { Double($0.discarded) })
        print(
            "| \(scenario.rawValue) | \(contestant) | "
                + String(
                    format: "%.2f s | %.0f%% | %.2f MiB (%.0f%% of the file) |",
                    seconds,
                    scenario.ideal / seconds * 100,
                    discarded / 1_048_576,
                    discarded / Double(fileSize) * 100
                )
        )
    }
}
