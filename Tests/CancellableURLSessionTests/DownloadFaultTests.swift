import Cancellable
import Foundation
import LoopbackHTTPServer
import PromiseCore
import TestSupport
import Testing

@testable import CancellableURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every fault a download meets, at every point of its life: a new download, one resumed after a pause, one resumed
/// after two. Each case checks the promise, the resume data, the partial file on disk byte for byte, that nothing
/// stray is left in the directory — and then resumes from a healthy server, which must send exactly the bytes that
/// were not kept. The expectations are one table, ``Fault/ending``: the endings table of the article
/// PausingAndResumingDownloads.md.
@Suite struct DownloadFaultTests {
    static let size = 512 * 1_024
    static var body: Data { DownloadIntegrationTests.payload(size) }
    /// The same size, other bytes: the file after it changed.
    static var changedBody: Data { Data(body.reversed()) }
    /// How many bytes of its body a response sends before a fault part-way through it.
    static let beforeFault = 64 * 1_024

    /// What has happened to the download before the request the fault hits.
    enum History: String, CaseIterable, Sendable {
        /// Nothing: the fault hits its first request.
        case fresh
        /// Paused once, at about 40%: the fault hits the resume.
        case pausedOnce
        /// Paused at about 25%, resumed, paused again about 25% later: the fault hits the second resume.
        case pausedTwice
    }

    /// What the request meets, and how the test ends it if it does not end by itself.
    enum Fault: String, CaseIterable, Sendable {
        case refused, dnsFailure, closedBeforeHeaders, resetBeforeHeaders, stallPastTimeoutInterval
        case pausedBeforeHeaders, cancelledBeforeHeaders, timedOutBeforeHeaders, lostRaceBeforeHeaders
        case pausedWhileRedirected, redirected
        case resetMidBody, shortBody, stallMidBodyPastTimeoutInterval, pausedMidBody
        case errorStatus
        case changedWithoutValidators

        /// How the download ends, and what it keeps.
        var ending: Ending {
            switch self {
            case .refused: .failure(.url(.cannotConnectToHost), keeps: .ifAny)
            case .dnsFailure: .failure(.url(.cannotFindHost), keeps: .ifAny)
            case .closedBeforeHeaders: .failure(.url(.badServerResponse), keeps: .ifAny)
            case .resetBeforeHeaders: .failure(.url(.networkConnectionLost), keeps: .ifAny)
            case .stallPastTimeoutInterval: .failure(.url(.timedOut), keeps: .ifAny)
            case .pausedBeforeHeaders, .pausedWhileRedirected: .failure(.cancelled(.paused), keeps: .always)
            case .cancelledBeforeHeaders: .failure(.cancelled(.user), keeps: .nothing)
            case .timedOutBeforeHeaders: .failure(.cancelled(.timeout), keeps: .nothing)
            case .lostRaceBeforeHeaders: .failure(.cancelled(.lostRace), keeps: .nothing)
            case .redirected, .changedWithoutValidators: .success
            case .resetMidBody: .failure(.url(.networkConnectionLost), keeps: .whatArrived)
            case .shortBody: .failure(.anyURLError, keeps: .everyByteSent)
            case .stallMidBodyPastTimeoutInterval: .failure(.url(.timedOut), keeps: .everyByteSent)
            case .pausedMidBody: .failure(.cancelled(.paused), keeps: .whatArrived)
            case .errorStatus: .failure(.status(503), keeps: .ifAny)
            }
        }
    }

    enum Ending: Equatable {
        case success
        case failure(ExpectedError, keeps: Keeps)
    }

    enum ExpectedError: Equatable {
        case url(URLError.Code)
        /// A `URLError` of whichever code the platform gives (a body shorter than its `Content-Length`: Linux's
        /// FoundationNetworking reports `.unknown`).
        case anyURLError
        case cancelled(CancellationReason)
        case status(Int)

        func matches(_ error: Error?) -> Bool {
            switch self {
            case .url(let code): (error as? URLError)?.code == code
            case .anyURLError: error is URLError
            case .cancelled(let reason): error?.cancellationReason == reason
            case .status(let code): (error as? HTTPStatusError)?.statusCode == code
            }
        }
    }

    /// What a failed download keeps.
    enum Keeps: Equatable {
        /// The bytes it started with, if there were any; nothing (no resume data, no partial file) otherwise.
        case ifAny
        /// The bytes it started with, even none: a pause always gives resume data.
        case always
        /// Nothing: cancelled for good.
        case nothing
        /// The bytes it started with and those of the faulted body that reached the client before the fault (a reset
        /// discards what the client had not read yet); resume data if that is any.
        case whatArrived
        /// The bytes it started with and every byte of the faulted body that was sent.
        case everyByteSent
    }

    // MARK: The matrix

    @Test(timeLimit(minutes: 1), arguments: Fault.allCases, History.allCases)
    func everyFaultAtEveryPointLeavesWhatTheEndingsTableSays(fault: Fault, history: History) async throws {
        let scene = try Scene(fault: fault)
        defer { scene.tearDown() }
        let before = try await scene.live(history)
        let kept = before?.bytesKept ?? 0
        if let before {
            #expect(try fileContents(before.partialFile) == scene.served(before).prefix(Int(kept)))
        }

        let download = scene.start(fault, after: before)
        try await scene.end(download, by: fault)
        let error = await failure(of: download.promise)
        let resumeData = await download.resumeData.async()
        let contents = try scene.directory.contents()

        switch fault.ending {
        case .success:
            #expect(error == nil, "\(error as Any)")
            #expect(resumeData == nil)
            #expect(contents == ["file.bin"])
            let expected = fault == .changedWithoutValidators ? Self.changedBody : Self.body
            #expect(try fileContents(scene.directory.destination) == expected, "never a spliced file")
            if fault == .changedWithoutValidators {
                #expect(scene.server.connections.last?.range == nil, "without a validator the resume starts over")
            }
            return
        case .failure(let expected, let keeps):
            #expect(expected.matches(error), "\(fault), \(history): got \(error as Any)")
            let partial = before?.partialFile
            switch keeps {
            case .nothing:
                #expect(resumeData == nil)
                #expect(contents.isEmpty, "removed: \(contents)")
                return
            case .ifAny where kept == 0:
                #expect(resumeData == nil)
                #expect(contents.isEmpty, "nothing to keep: \(contents)")
                return
            case .ifAny, .always:
                let saved = try #require(resumeData, "\(fault), \(history): the bytes must be kept")
                #expect(saved.bytesKept == kept, "every byte it started with, no fewer")
                if let before {
                    #expect(saved.validator == before.validator && saved.totalBytes == before.totalBytes)
                }
                #expect(partial == nil || saved.partialFile == partial)
                try scene.expectOnDisk(saved)
                try await scene.expectResumable(saved)
            case .whatArrived, .everyByteSent:
                let upTo = kept + Int64(Self.beforeFault)
                guard let saved = resumeData else {
                    // A reset can discard every byte the client had not read yet: then nothing was kept.
                    #expect(keeps == .whatArrived && kept == 0, "\(fault), \(history): no resume data")
                    #expect(contents.isEmpty)
                    return
                }
                if keeps == .everyByteSent {
                    #expect(saved.bytesKept == upTo)
                } else {
                    #expect(saved.bytesKept >= kept && saved.bytesKept <= upTo, "\(saved.bytesKept) of \(kept)…\(upTo)")
                }
                // A body that ended before its announced length leaves that length a claim: it stays only where an
                // earlier answer (the paused download's) had named it too. A pause ends nothing early.
                let total = history == .fresh && fault != .pausedMidBody ? nil : Int64(Self.size)
                #expect(saved.validator == .entityTag("\"v1\"") && saved.totalBytes == total)
                try scene.expectOnDisk(saved)
                try await scene.expectResumable(saved)
            }
        }
    }

    // MARK: A session without live delivery

    /// A session without live delivery never continues bytes, but it must not lose them either: a resume that meets
    /// a mirror that is down keeps them for the next try, on every platform.
    @Test(timeLimit(minutes: 1))
    func onASessionWithoutLiveDeliveryAResumeThatFailsBeforeTheHeadersKeepsTheBytes() async throws {
        let scene = try Scene(fault: .refused)
        defer { scene.tearDown() }
        let saved = try #require(try await scene.live(.pausedOnce))
        let session = sessionWithoutLiveDelivery()
        defer { session.finishTasksAndInvalidate() }
        let refused = session.resumeDownload(saved, from: URLRequest(url: scene.refusing.url("/file")))
        #expect((await failure(of: refused.promise) as? URLError)?.code == .cannotConnectToHost)
        let again = try #require(await refused.resumeData.async())
        #expect(again == saved)
        try scene.expectOnDisk(again)
        try await scene.expectResumable(again)
    }
}

/// One test's server, session and directory, and the steps of its download.
private struct Scene {
    typealias Fault = DownloadFaultTests.Fault
    let fault: Fault
    let directory: DownloadDirectory
    let file: ServedFile
    let server: LoopbackHTTPServer
    let refusing: RefusingPort
    let session: URLSession
    /// Opens once the client has written the faulted body's first ``DownloadFaultTests/beforeFault`` bytes: that the
    /// server sent them does not mean the client has read them, or even the headers before them.
    let faultedBodyArrived = Latch()

    init(fault: Fault) throws {
        self.fault = fault
        directory = try DownloadDirectory()
        let file = ServedFile(
            LoopbackHTTPServer.Resource(
                body: DownloadFaultTests.body,
                entityTag: fault == .changedWithoutValidators ? nil : "\"v1\"",
                lastModified: nil,
                bytesPerSecond: 2 * 1_048_576
            )
        )
        self.file = file
        server = try LoopbackHTTPServer { request in
            switch request.path {
            case "/file": return .resource(file.current)
            case "/stall": return .stall
            case let path where path.hasPrefix("/held/"):
                // Sends that many bytes of its body, then holds the connection until the client leaves: a download
                // from here is paused at a known point, however loaded the machine, and never ends by itself.
                var held = file.current
                held.interruption = .stall(after: Int(path.dropFirst("/held/".count)) ?? 0)
                return .resource(held)
            default: return Self.response(to: fault, serving: file)
            }
        }
        refusing = try RefusingPort()
        session = .withProgressReporting(configuration: .ephemeral)
    }

    func tearDown() {
        session.finishTasksAndInvalidate()
        server.stop()
        directory.remove()
    }

    /// How the server answers the faulted request (at `/fault`).
    private static func response(to fault: Fault, serving file: ServedFile) -> LoopbackHTTPServer.Response {
        var resource = file.current
        resource.bytesPerSecond = nil
        switch fault {
        case .closedBeforeHeaders: return .closeBeforeHeaders
        case .resetBeforeHeaders: return .resetBeforeHeaders
        case .stallPastTimeoutInterval, .pausedBeforeHeaders, .cancelledBeforeHeaders, .timedOutBeforeHeaders,
            .lostRaceBeforeHeaders:
            return .stall
        case .pausedWhileRedirected: return .redirect(to: "/stall")
        case .redirected: return .redirect(to: "/file")
        case .resetMidBody: resource.interruption = .reset(after: DownloadFaultTests.beforeFault)
        case .shortBody: resource.interruption = .close(after: DownloadFaultTests.beforeFault)
        case .pausedMidBody, .stallMidBodyPastTimeoutInterval:
            resource.interruption = .stall(after: DownloadFaultTests.beforeFault)
        case .errorStatus: return .status(503, body: Data("down for maintenance".utf8))
        case .changedWithoutValidators: resource.body = DownloadFaultTests.changedBody
        case .refused, .dnsFailure: break  // never asked: their requests go elsewhere
        }
        return .resource(resource)
    }

    /// The bytes the server serves for `data`'s file.
    func served(_ data: DownloadResumeData) -> Data { file.current.body }

    /// Lives `history` on the healthy path (`/file`): the resume data the faulted request starts from, if any.
    func live(_ history: DownloadFaultTests.History) async throws -> DownloadResumeData? {
        switch history {
        case .fresh:
            return nil
        case .pausedOnce:
            return try await pause(after: 0.4) { held, progress in
                session.resumableDownload(from: server.url(held), to: directory.destination, progress: progress)
            }
        case .pausedTwice:
            let saved = try await pause(after: 0.25) { held, progress in
                session.resumableDownload(from: server.url(held), to: directory.destination, progress: progress)
            }
            // Without a validator the resume starts over from byte 0.
            return try await pause(after: 0.25, from: saved.validator == nil ? 0 : saved.bytesKept) { held, progress in
                session.resumeDownload(saved, from: URLRequest(url: server.url(held)), progress: progress)
            }
        }
    }

    /// Starts a download with `start`, from a path whose response holds the connection once it has sent `fraction`
    /// of the file, and pauses it once the client has written those bytes (after the `kept` it started with).
    private func pause(
        after fraction: Double,
        from kept: Int64 = 0,
        _ start: (_ heldPath: String, _ progress: @escaping @Sendable (TransferProgress) -> Void) -> ResumableDownload
    ) async throws -> DownloadResumeData {
        let bytes = Int(Double(DownloadFaultTests.size) * fraction)
        let arrived = Latch()
        let download = start("/held/\(bytes)") { progress in
            // Only a transferring report counts: a resume's connecting report carries the bytes it starts with, which
            // a resume without a validator then drops to start over from byte 0.
            if progress.phase == .transferring, progress.bytesTransferred >= kept + Int64(bytes) { arrived.open() }
        }
        #expect(await arrived.opened(within: .seconds(40)), "the held response's bytes")
        let saved = try #require(await download.pause().async())
        #expect(saved.bytesKept == kept + Int64(bytes))
        return saved
    }

    /// Starts the request the fault hits: a new download, or a resume of `saved`.
    func start(_ fault: Fault, after saved: DownloadResumeData?) -> ResumableDownload {
        let arrived = (saved?.bytesKept ?? 0) + Int64(DownloadFaultTests.beforeFault)
        let progress: @Sendable (TransferProgress) -> Void = { [faultedBodyArrived] progress in
            if progress.phase == .transferring, progress.bytesTransferred >= arrived { faultedBodyArrived.open() }
        }
        var request = URLRequest(url: server.url("/fault"))
        switch fault {
        case .refused: request.url = refusing.url("/file")
        case .dnsFailure: request.url = URL(string: "http://nonexistent.invalid/file")
        case .stallPastTimeoutInterval, .stallMidBodyPastTimeoutInterval:
            request.timeoutInterval = 1  // whole seconds: see the timeouts article
        default: break
        }
        guard let saved else {
            return session.resumableDownload(for: request, to: directory.destination, progress: progress)
        }
        return session.resumeDownload(saved, from: request, progress: progress)
    }

    /// Ends the download the way `fault` says, once the server has seen its request (or the client the faulted body).
    func end(_ download: ResumableDownload, by fault: Fault) async throws {
        func waitForRequest(to path: String) async {
            #expect(await server.waitUntil { $0.contains { $0.path == path } }, "\(path)")
        }
        switch fault {
        case .pausedBeforeHeaders:
            await waitForRequest(to: "/fault")
            download.pause()
        case .pausedWhileRedirected:
            await waitForRequest(to: "/stall")
            download.pause()
        case .cancelledBeforeHeaders:
            await waitForRequest(to: "/fault")
            download.cancel()
        case .timedOutBeforeHeaders:
            let limited = download.promise.timeout(seconds: 0.3)
            #expect(await failure(of: limited) is TimeoutError)
        case .lostRaceBeforeHeaders:
            let (winner, resolver) = CancellablePromise<(url: URL, response: URLResponse)>.pending()
            let race = race([download.promise, winner], autoCancel: true)
            await waitForRequest(to: "/fault")
            let response = URLResponse(
                url: directory.destination,
                mimeType: nil,
                expectedContentLength: 0,
                textEncodingName: nil
            )
            resolver.fulfill((directory.destination, response))
            _ = try await race.async()
        case .pausedMidBody:
            #expect(await faultedBodyArrived.opened(within: .seconds(40)), "the faulted body's first bytes")
            download.pause()
        default:
            break
        }
    }

    /// The partial file holds exactly `saved`'s bytes of the file, and nothing else is in the directory.
    func expectOnDisk(_ saved: DownloadResumeData) throws {
        #expect(try directory.contents() == [saved.partialFile.lastPathComponent], "nothing stray")
        let onDisk = try fileContents(saved.partialFile)
        #expect(onDisk.count == Int(saved.bytesKept))
        #expect(onDisk == served(saved).prefix(Int(saved.bytesKept)), "byte for byte the file's first bytes")
    }

    /// Resumes `saved` from the healthy server: the download finishes with the file, and the server sends exactly the
    /// bytes that were not kept.
    func expectResumable(_ saved: DownloadResumeData) async throws {
        let resumed = session.resumeDownload(saved, from: URLRequest(url: server.url("/file")))
        let (url, _) = try await resumed.promise.async()
        #expect(try fileContents(url) == file.current.body)
        #expect(try directory.contents() == ["file.bin"])
        #expect(await server.waitUntil { $0.last?.finishedAt != nil })
        let last = try #require(server.connections.last)
        if saved.bytesKept > 0 {
            #expect(last.range == "bytes=\(saved.bytesKept)-" && last.status == 206)
        }
        #expect(last.bytesSent == DownloadFaultTests.size - Int(saved.bytesKept), "no byte sent twice")
    }
}
