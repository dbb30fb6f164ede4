import Cancellable
import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The file side of one download: where its bytes go, how a resumed request continues the bytes kept, what is
/// checked before the file replaces the destination, and — for a ``ResumableDownload`` — what is kept when it
/// stops early.
///
/// Every method but ``stop(_:)`` is called from the session's delegate queue, one callback at a time (or, on a
/// session without live delivery, once from the task's completion handler), so that state needs no lock.
/// ``stop(_:)`` is the download's cancel handler: it runs on the cancelling thread, and records its reason in a
/// `Locked`.
final class FileDownload: @unchecked Sendable {
    /// Receives a resumable download's resume data, or `nil`, once it ends.
    typealias ResumeDataSink = (DownloadResumeData?) -> Void

    /// What a resumed request asks the server to continue: `Range: bytes=<start>-`, `If-Range: <validator>`.
    struct Continuation {
        let start: Int64
        let validator: DownloadResumeData.Validator?
        let totalBytes: Int64?
    }

    /// What to do with a response's body.
    enum Disposition {
        /// Write it to the file.
        case write
        /// It is an error status's body: collect it for ``HTTPStatusError``.
        case errorBody
        /// The file already holds every byte (a `416` answering a range that starts at its end): ignore the body.
        case ignore
        /// Stop the transfer: ``finish(error:errorStatus:)`` reports why.
        case cancel
    }

    let partial: PartialFile
    private let url: URL
    private let integrity: DownloadIntegrity?
    private let continuation: Continuation?
    /// Resolved when the download ends, for a resumable download.
    private let resumeData: ResumeDataSink?
    private var handle: FileHandle?
    /// Bytes in the file before this response's body: where the server continued, or 0.
    private var offset: Int64 = 0
    /// Bytes of this response's body written.
    private var written: Int64 = 0
    private var validator: DownloadResumeData.Validator?
    private var totalBytes: Int64?
    /// Why the download failed on this side (a file error, a response that does not continue the bytes kept).
    private var failure: Error?

    /// Whether this download holds its partial file in ``partialFilesInUse`` (a resumed one does).
    private var isClaimed = false

    /// Why the download was cancelled, set by ``stop(_:)``.
    private let stopReason = Locked<CancellationReason?>(nil)

    /// The paths of the partial files that resumed downloads are writing: two downloads resumed from the same resume
    /// data would write one file at once.
    private static let partialFilesInUse = Locked<Set<String>>([])

    /// A download from the start into a new partial file next to `destination`.
    ///
    /// - Throws: the file system's error, or ``DownloadIntegrityError/invalidExpectation(_:)``.
    convenience init(
        url: URL,
        to destination: URL,
        verifying integrity: DownloadIntegrity?,
        resumeData: ResumeDataSink?
    ) throws {
        try integrity?.validate()
        let (partial, handle) = try PartialFile.create(for: destination)
        self.init(url: url, partial: partial, handle: handle, integrity: integrity, continuation: nil, resumeData)
    }

    /// A download that continues `data`'s partial file, asking `url` for the rest.
    ///
    /// Bytes are continued only if the partial file still holds them and the server can be held to the same file:
    /// by a validator for `If-Range`, or else by the total length its `Content-Range` must repeat — and if the
    /// session delivers bytes as they arrive (`continuing`). Otherwise the download starts over into the same partial
    /// file.
    convenience init(
        resuming data: DownloadResumeData,
        from url: URL,
        continuing: Bool,
        verifying integrity: DownloadIntegrity?,
        resumeData: ResumeDataSink?
    ) throws {
        try integrity?.validate()
        guard Self.claim(data.partialFile) else {
            throw DownloadResumeError.partialFileInUse(data.partialFile)
        }
        let canContinue = continuing && (data.validator != nil || data.totalBytes != nil)
        let partial: PartialFile
        let handle: FileHandle
        let kept: Int64
        do {
            (partial, handle, kept) = try PartialFile.reopen(
                data.partialFile,
                for: data.destination,
                keeping: canContinue ? data.bytesWritten : 0
            )
        } catch {
            Self.release(data.partialFile)
            throw error
        }
        let continuation =
            kept > 0 ? Continuation(start: kept, validator: data.validator, totalBytes: data.totalBytes) : nil
        self.init(
            url: url,
            partial: partial,
            handle: handle,
            integrity: integrity,
            continuation: continuation,
            resumeData
        )
        validator = data.validator
        isClaimed = true
    }

    private init(
        url: URL,
        partial: PartialFile,
        handle: FileHandle,
        integrity: DownloadIntegrity?,
        continuation: Continuation?,
        _ resumeData: ResumeDataSink?
    ) {
        self.url = url
        self.partial = partial
        self.handle = handle
        self.integrity = integrity
        self.continuation = continuation
        self.resumeData = resumeData
    }

    /// `request` with the headers that continue the bytes kept, if any.
    func prepare(_ request: URLRequest) -> URLRequest {
        guard let continuation else { return request }
        var request = request
        request.setValue("bytes=\(continuation.start)-", forHTTPHeaderField: "Range")
        if let validator = continuation.validator {
            request.setValue(validator.headerValue, forHTTPHeaderField: "If-Range")
        }
        return request
    }

    /// The download's cancel handler: remembers why, so that ``finish(error:errorStatus:)`` keeps the bytes for a
    /// pause and removes them otherwise.
    func stop(_ reason: CancellationReason) {
        stopReason.withLock { $0 = $0 ?? reason }
    }

    /// Records that a resumed download writes `file`; `false` if another one already does.
    private static func claim(_ file: URL) -> Bool {
        partialFilesInUse.withLock { $0.insert(file.standardizedFileURL.path).inserted }
    }

    private static func release(_ file: URL) {
        _ = partialFilesInUse.withLock { $0.remove(file.standardizedFileURL.path) }
    }

    /// Decides what this response's body is: the file from the start, its continuation, or neither.
    func accept(_ response: URLResponse) -> Disposition {
        guard let http = response as? HTTPURLResponse else {
            // Not HTTP (a file: URL, say): the body is the file.
            return restart(total: response.expectedContentLength >= 0 ? response.expectedContentLength : nil)
        }
        let contentRange = http.value(forHTTPHeaderField: "Content-Range")
        if let continuation {
            switch http.statusCode {
            case 206:
                guard let range = ContentRange(contentRange), range.start == continuation.start,
                    continuation.totalBytes == nil || range.total == nil || range.total == continuation.totalBytes
                else {
                    failure = DownloadResumeError.unexpectedContentRange(contentRange)
                    return .cancel
                }
                offset = continuation.start
                totalBytes = range.total ?? continuation.totalBytes
                validator = Self.validator(of: http) ?? validator
                return .write
            case 416:
                // If-Range matched (else the answer is 200), and the range starts at or after the file's end.
                let length = ContentRange(contentRange)?.total ?? continuation.totalBytes
                guard length == continuation.start else {
                    failure = DownloadResumeError.rangeNotSatisfiable(serverLength: length)
                    return .cancel
                }
                offset = continuation.start
                totalBytes = length
                return .ignore
            case 200...299:
                // The server sends the whole file: it ignores ranges, or the file changed and If-Range did not match.
                validator = nil
                break
            default:
                closeKeepingBytes()
                return .errorBody
            }
        } else if !(200...299).contains(http.statusCode) {
            closeKeepingBytes()
            return .errorBody
        }
        validator = Self.validator(of: http)
        let total = ContentRange(contentRange)?.total ?? response.expectedContentLength
        return restart(total: total >= 0 ? total : nil)
    }

    /// Writes the body into the file from byte 0.
    private func restart(total: Int64?) -> Disposition {
        offset = 0
        totalBytes = total
        guard continuation != nil, let handle else { return .write }
        do {
            try PartialFile.truncate(handle, at: 0)
            return .write
        } catch {
            failure = error
            return .cancel
        }
    }

    /// An error status: the body is not the file. The file is closed with the bytes kept from before, if any;
    /// ``finish(error:errorStatus:)`` decides whether they stay for a resume.
    private func closeKeepingBytes() {
        try? handle?.close()
        handle = nil
        offset = continuation?.start ?? 0
    }

    /// Appends `data` to the file.
    ///
    /// - Returns: `false` if the write failed: cancel the task; ``finish(error:errorStatus:)`` reports the error.
    func write(_ data: Data) -> Bool {
        guard let handle else { return true }
        do {
            if #available(macOS 10.15.4, iOS 13.4, tvOS 13.4, watchOS 6.2, *) {
                try handle.write(contentsOf: data)
            } else {
                handle.write(data)  // the only write before those versions; it cannot report an error
            }
            written += Int64(data.count)
            return true
        } catch {
            failure = error
            return false
        }
    }

    /// How far the file has got: from the byte the server continued at, towards the whole file's length.
    var progress: TransferProgress {
        TransferProgress(bytesTransferred: offset + written, totalBytesExpected: totalBytes)
    }

    /// Moves a file the session downloaded in one piece (a session without live delivery) into the partial file.
    func fill(from location: URL) -> Bool {
        do {
            try? handle?.close()
            handle = nil
            try partial.fill(from: location)
            return true
        } catch {
            failure = error
            return false
        }
    }

    /// Ends the download: checks and moves the file into place, or keeps the bytes for a resume, or removes them.
    ///
    /// - Parameters:
    ///   - error: the task's error, if it failed.
    ///   - errorStatus: whether the response was an error status (``Disposition/errorBody``).
    /// - Returns: the destination, or the error to reject the download with (ignored if it was cancelled).
    func finish(error: Error?, errorStatus: Bool) -> Swift.Result<URL, Error> {
        try? handle?.close()
        handle = nil
        let bytes = offset + written
        if let reason = stopReason.withLock({ $0 }) {
            // Cancelled, even if the last byte raced the cancellation in: the promise already says so.
            return keepOrRemove(keeping: reason == .paused, bytes: bytes, CancellablePromiseError(reason: reason))
        }
        if let failure {
            return keepOrRemove(keeping: false, bytes: bytes, failure)
        }
        if let error {
            return keepOrRemove(keeping: bytes > 0, bytes: bytes, error)
        }
        if errorStatus {
            return keepOrRemove(keeping: continuation != nil, bytes: offset, URLError(.badServerResponse))
        }
        do {
            try integrity?.verify(fileAt: partial.url)
            try partial.commit()
            publish(nil)
            return .success(partial.destination)
        } catch {
            return keepOrRemove(keeping: false, bytes: bytes, error)
        }
    }

    private func keepOrRemove(keeping: Bool, bytes: Int64, _ error: Error) -> Swift.Result<URL, Error> {
        guard keeping, resumeData != nil else {
            partial.remove()
            publish(nil)
            return .failure(error)
        }
        publish(
            DownloadResumeData(
                url: url,
                destination: partial.destination,
                partialFile: partial.url,
                bytesWritten: bytes,
                validator: validator,
                totalBytes: totalBytes,
                integrity: integrity
            )
        )
        return .failure(error)
    }

    /// The last thing a download does with its partial file, on every path through ``finish(error:errorStatus:)``:
    /// gives up its hold on the file (it no longer writes, moves or removes it), then hands `data` (`nil`: nothing
    /// to resume) to whoever waits for the resume data — who may resume from it at once, even inside that callback.
    private func publish(_ data: DownloadResumeData?) {
        if isClaimed {
            isClaimed = false
            Self.release(partial.url)
        }
        resumeData?(data)
    }

    /// A strong validator from `response`: its `ETag` unless weak, else its `Last-Modified`.
    private static func validator(of response: HTTPURLResponse) -> DownloadResumeData.Validator? {
        if let tag = response.value(forHTTPHeaderField: "ETag"), !tag.hasPrefix("W/"), !tag.isEmpty {
            return .entityTag(tag)
        }
        if let date = response.value(forHTTPHeaderField: "Last-Modified"), !date.isEmpty {
            return .lastModified(date)
        }
        return nil
    }
}

/// A `Content-Range` header: `bytes <start>-<end>/<total>` (206), or `bytes */<total>` (416).
struct ContentRange: Equatable {
    /// The first byte, `nil` for `*`.
    let start: Int64?
    /// The last byte, `nil` for `*`.
    let end: Int64?
    /// The whole length, `nil` for `*`.
    let total: Int64?

    init?(_ header: String?) {
        guard let header else { return nil }
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let parts = trimmed.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        if parts[1] == "*" {
            total = nil
        } else {
            guard let value = Int64(parts[1]), value >= 0 else { return nil }
            total = value
        }
        if parts[0] == "*" {
            guard total != nil else { return nil }
            (start, end) = (nil, nil)
        } else {
            let bounds = parts[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first >= 0,
                first <= last, total.map({ last < $0 }) ?? true
            else { return nil }
            (start, end) = (first, last)
        }
    }
}
