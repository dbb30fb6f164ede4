import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where a download is written until it succeeds: a hidden file next to the destination. A file already at the
/// destination survives a download that fails or is cancelled, and is replaced in one step — a rename within
/// the directory — when it succeeds.
struct PartialFile: Sendable {
    /// The hidden file: `.<name>.<UUID>.partial`, in the destination's directory.
    let url: URL
    /// Where the download goes once it succeeds.
    let destination: URL

    /// Creates the partial file, and opens it for writing.
    ///
    /// - Throws: the file system's error if the destination is a directory or its directory cannot be written:
    ///   before any request is sent.
    static func create(for destination: URL) throws -> (PartialFile, FileHandle) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: destination.path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw CocoaError(.fileWriteFileExists, userInfo: [NSFilePathErrorKey: destination.path])
        }
        let name = ".\(destination.lastPathComponent).\(UUID().uuidString).partial"
        let file = PartialFile(
            url: destination.deletingLastPathComponent().appendingPathComponent(name),
            destination: destination
        )
        guard FileManager.default.createFile(atPath: file.url.path, contents: nil) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: destination.path])
        }
        do {
            return (file, try FileHandle(forWritingTo: file.url))
        } catch {
            file.remove()
            throw error
        }
    }

    /// Moves `source` (a file the session downloaded elsewhere, possibly on another volume) into the partial file.
    func fill(from source: URL) throws {
        remove()
        try FileManager.default.moveItem(at: source, to: url)
    }

    /// Renames the partial file over the destination, atomically; on failure, removes it and throws.
    func commit() throws {
        guard rename(url.path, destination.path) == 0 else {
            let code = POSIXErrorCode(rawValue: errno) ?? .EIO
            remove()
            throw POSIXError(code)
        }
    }

    /// Removes the partial file, if it is there.
    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
