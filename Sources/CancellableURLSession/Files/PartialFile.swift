import Foundation
import PromiseCore

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
///
/// The library owns its partial files and touches no other file: a partial file is always named
/// `.<destination's name>.<UUID>.partial`, in the destination's folder, and a path read back from resume data is
/// used only if it is exactly such a name (``isOwned(_:by:)``). It is opened without following a symbolic link and
/// used only if it is a regular file with no other link to it; it is removed with `unlink(2)`, which never removes a
/// directory.
struct PartialFile: Sendable {
    /// The hidden file: `.<name>.<UUID>.partial`, in the destination's directory; always a plain file path
    /// (``isPlainFilePath(_:)``): ``create(for:)`` derives it from a plain destination, and every other way in checks
    /// ``isOwned(_:by:)`` first.
    let url: URL
    /// Where the download goes once it succeeds.
    let destination: URL

    private static let suffix = ".partial"

    /// A new partial file's URL for `destination`.
    static func newURL(for destination: URL) -> URL {
        url(for: destination, id: UUID().uuidString)
    }

    /// The partial file `id` of `destination`: `.<name>.<id>.partial` in the destination's folder.
    static func url(for destination: URL, id: String) -> URL {
        destination.deletingLastPathComponent()
            .appendingPathComponent(".\(destination.lastPathComponent).\(id)\(suffix)")
    }

    /// The id (a UUID) in the name of `url`, a partial file the library named for `destination` (``isOwned(_:by:)``);
    /// `nil` for any other file.
    static func id(of url: URL, for destination: URL) -> String? {
        guard isPlainFilePath(destination), isPlainFilePath(url),
            url.standardizedFileURL.deletingLastPathComponent().path
                == destination.standardizedFileURL.deletingLastPathComponent().path
        else { return nil }
        let name = Array(url.lastPathComponent.utf8)
        let prefix = Array(".\(destination.lastPathComponent).".utf8)
        let suffix = Array(Self.suffix.utf8)
        guard name.count > prefix.count + suffix.count, name.starts(with: prefix),
            name.reversed().starts(with: suffix.reversed())
        else { return nil }
        let id = String(decoding: name[prefix.count..<(name.count - suffix.count)], as: UTF8.self)
        return UUID(uuidString: id)?.uuidString == id ? id : nil
    }

    /// Whether `url` is a partial file this library names for `destination`: `.<destination's name>.<UUID>.partial`
    /// (the UUID as `UUID.uuidString` writes it), in the destination's folder; both plain file paths
    /// (``isPlainFilePath(_:)``).
    static func isOwned(_ url: URL, by destination: URL) -> Bool {
        id(of: url, for: destination) != nil
    }

    /// Whether `url` is an absolute file path that names a file (not `/`), without `..` (whose meaning a symbolic
    /// link can change) and without NUL (where the system's calls would cut the path short).
    static func isPlainFilePath(_ url: URL) -> Bool {
        let components = url.pathComponents
        return url.isFileURL && url.path.hasPrefix("/") && components.count > 1 && components.last != "."
            && !components.contains("..") && !url.path.utf8.contains(0)
    }

    /// Creates a new partial file for `destination`, claimed (``claim(_:)``) before it exists so that
    /// ``removeAbandoned(for:except:)`` never takes it from the download, and opens it for writing. The caller
    /// releases the claim (``release(_:)``) once the download no longer writes, moves or removes the file.
    ///
    /// - Throws: before any request is sent, a `CocoaError`: `.fileWriteInvalidFileName` if the destination is not a
    ///   plain file path (``isPlainFilePath(_:)``), `.fileWriteFileExists` if it is a directory, `.fileNoSuchFile` if
    ///   its folder does not exist, `.fileWriteNoPermission` if it cannot be written.
    static func create(for destination: URL) throws -> (PartialFile, FileHandle) {
        guard isPlainFilePath(destination) else {
            throw CocoaError(.fileWriteInvalidFileName, userInfo: [NSFilePathErrorKey: destination.path])
        }
        let destination = destination.standardizedFileURL
        let file = PartialFile(url: newURL(for: destination), destination: destination)
        _ = claim(file.url)  // a new UUID: nobody else holds it
        do {
            try file.refuseDirectoryDestination()
            let (handle, _) = try file.open(creating: true)
            return (file, handle)
        } catch {
            release(file.url)
            throw error
        }
    }

    /// Opens the partial file of a paused download to continue it: keeps its first `bytes` bytes and opens it for
    /// writing after them. A partial file that is gone or shorter than `bytes` is (re)created empty.
    ///
    /// - Returns: the file, its handle, and how many bytes it kept (`bytes` or 0).
    /// - Throws: ``DownloadError/partialFileNotOwned(_:)`` if `url` is not a partial file of `destination`
    ///   (``isOwned(_:by:)``), or is a directory, a symbolic link or a file with another link: nothing is touched.
    ///   A file that cannot be truncated stays as it was.
    static func reopen(
        _ url: URL,
        for destination: URL,
        keeping bytes: Int64
    ) throws -> (PartialFile, FileHandle, Int64) {
        try reopen(url, for: destination) { size in bytes > 0 && size >= bytes ? bytes : 0 }
    }

    /// Opens the partial file of a paused segmented download to continue it: keeps what is on disk of `ranges`
    /// (sorted, disjoint) — each cut at the file's end — and cuts the file after the last of them. A partial file
    /// that is gone is (re)created empty.
    ///
    /// - Returns: the file, its handle, and the ranges it kept.
    /// - Throws: as ``reopen(_:for:keeping:)``.
    static func reopen(
        _ url: URL,
        for destination: URL,
        keeping ranges: [Range<Int64>]
    ) throws -> (PartialFile, FileHandle, [Range<Int64>]) {
        var kept: [Range<Int64>] = []
        let (file, handle, _) = try reopen(url, for: destination) { size in
            kept = ranges.compactMap { $0.lowerBound < size ? $0.lowerBound..<min($0.upperBound, size) : nil }
            return kept.last?.upperBound ?? 0
        }
        return (file, handle, kept)
    }

    /// Opens the partial file `url` of `destination`, and cuts it to the length `keep` gives for its size.
    private static func reopen(
        _ url: URL,
        for destination: URL,
        keep: (Int64) -> Int64
    ) throws -> (PartialFile, FileHandle, Int64) {
        guard isOwned(url, by: destination) else { throw DownloadError.partialFileNotOwned(url) }
        let file = PartialFile(url: url, destination: destination)
        try file.refuseDirectoryDestination()
        let (handle, size) = try file.open(creating: false)
        let kept = keep(size)
        do {
            try truncate(handle, at: kept)
        } catch {
            try? handle.close()
            throw error
        }
        return (file, handle, kept)
    }

    /// The partial files that downloads in this process are writing: two downloads resumed from the same resume data
    /// would write one file at once, and ``removeAbandoned(for:except:)`` must not remove them. Each is recorded
    /// under its ``identity(of:)``, and by the path it was claimed as, to release it by.
    private static let inUse = Locked<(identities: Set<String>, byPath: [String: String])>(([], [:]))

    /// Records that a download writes `file`; `false` if another one already does, under whatever spelling of its
    /// folder.
    static func claim(_ file: URL) -> Bool {
        let path = file.standardizedFileURL.path
        let identity = identity(of: file)
        return inUse.withLock { inUse in
            guard inUse.byPath[path] == nil, inUse.identities.insert(identity).inserted else { return false }
            inUse.byPath[path] = identity
            return true
        }
    }

    /// Records that the download that claimed `file` no longer writes, moves or removes it.
    static func release(_ file: URL) {
        let path = file.standardizedFileURL.path
        inUse.withLock { inUse in
            if let identity = inUse.byPath.removeValue(forKey: path) { inUse.identities.remove(identity) }
        }
    }

    /// `file`'s name in its folder's canonical path (`realpath(3)`: every symbolic link resolved), so that two
    /// spellings of one folder — `/var` and `/private/var` on Apple platforms, a link to it, a relocated resume
    /// data's — name one file; its standardized path if the folder cannot be resolved.
    static func identity(of file: URL) -> String {
        let file = file.standardizedFileURL
        guard let folder = realpath(file.deletingLastPathComponent().path, nil) else { return file.path }
        defer { free(folder) }
        return String(cString: folder) + "/" + file.lastPathComponent
    }

    /// Removes the partial files named for `destination` (``isOwned(_:by:)``) that no download in this process holds,
    /// except those in `kept` (compared by ``identity(of:)``). Each is claimed while it is removed, so a resume
    /// started meanwhile is refused (``DownloadError/partialFileInUse(_:)``) rather than write into a file that
    /// is then unlinked.
    ///
    /// - Returns: the files removed, in name order.
    /// - Throws: `CocoaError(.fileWriteInvalidFileName)` if `destination` is not a plain file path
    ///   (``isPlainFilePath(_:)``); the file system's error if its folder exists and cannot be listed.
    static func removeAbandoned(for destination: URL, except kept: [URL]) throws -> [URL] {
        guard isPlainFilePath(destination) else {
            throw CocoaError(.fileWriteInvalidFileName, userInfo: [NSFilePathErrorKey: destination.path])
        }
        let destination = destination.standardizedFileURL
        let folder = destination.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue
        else { return [] }
        let keep = Set(kept.map(identity(of:)))
        var removed: [URL] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() {
            let url = folder.appendingPathComponent(name, isDirectory: false)
            guard isOwned(url, by: destination), !keep.contains(identity(of: url)) else { continue }
            if PartialFile(url: url, destination: destination).removeUnlessInUse() { removed.append(url) }
        }
        return removed
    }

    private func refuseDirectoryDestination() throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: destination.path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw CocoaError(.fileWriteFileExists, userInfo: [NSFilePathErrorKey: destination.path])
        }
    }

    /// Opens the partial file for writing, creating it — only if nothing is there, if `creating` — without following a
    /// symbolic link at its path.
    ///
    /// - Returns: the handle, and the file's size.
    /// - Throws: ``DownloadError/partialFileNotOwned(_:)`` if what is there is not a regular file with one link
    ///   (a directory, a symbolic link, a device, a hard link to another file), or the folder's error as a
    ///   `CocoaError` (missing, not writable, read-only, full).
    private func open(creating: Bool) throws -> (FileHandle, Int64) {
        // O_NONBLOCK: a FIFO at the path would otherwise block the open until a reader comes.
        let flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (creating ? O_EXCL : 0)
        let descriptor = systemOpen(url.path, flags, 0o644)
        guard descriptor >= 0 else { throw openError(errno) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_nlink == 1,
            fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK) == 0
        else {
            close(descriptor)
            throw DownloadError.partialFileNotOwned(url)
        }
        return (FileHandle(fileDescriptor: descriptor, closeOnDealloc: true), Int64(status.st_size))
    }

    /// What a failed `open(2)` of the partial file means.
    private func openError(_ code: Int32) -> Error {
        let folder = [NSFilePathErrorKey: url.deletingLastPathComponent().path]
        switch code {
        case ELOOP, EISDIR, EEXIST, ENXIO, EMLINK: return DownloadError.partialFileNotOwned(url)
        case ENOENT, ENOTDIR: return CocoaError(.fileNoSuchFile, userInfo: folder)
        case EACCES, EPERM: return CocoaError(.fileWriteNoPermission, userInfo: folder)
        case EROFS: return CocoaError(.fileWriteVolumeReadOnly, userInfo: folder)
        case ENOSPC, EDQUOT: return CocoaError(.fileWriteOutOfSpace, userInfo: folder)
        default: return POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
    }

    /// The size in bytes of the file at `url` (-1 if the file system does not say).
    static func size(of url: URL) throws -> Int64 {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes[.size] as? NSNumber)?.int64Value ?? -1
    }

    /// The bytes of the file at `url`.
    ///
    /// An empty file gives empty data without being read: Linux's Foundation (swift-corelibs, Swift 6.3) leaks the
    /// 4 KiB buffer `Data(contentsOf:)` allocates for a file of size 0.
    static func contents(of url: URL) throws -> Data {
        try size(of: url) == 0 ? Data() : Data(contentsOf: url)
    }

    /// Cuts the file open in `handle` to `offset` bytes and moves the write position there.
    static func truncate(_ handle: FileHandle, at offset: Int64) throws {
        try handle.truncate(atOffset: UInt64(offset))
        try handle.seek(toOffset: UInt64(offset))
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

    /// Opens the partial file for reading, without following a symbolic link: to read back what was written.
    ///
    /// - Throws: ``DownloadError/partialFileNotOwned(_:)`` if it is not a regular file, or the system's error.
    func openForReading() throws -> FileHandle {
        let descriptor = systemOpen(url.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0)
        guard descriptor >= 0 else { throw openError(errno) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw DownloadError.partialFileNotOwned(url)
        }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// Flushes the partial file's bytes to disk (``synchronize(_:)``), through a descriptor of its own that does not
    /// follow a symbolic link. A flush covers every write made to the file before it, through any descriptor.
    ///
    /// - Returns: whether the bytes are on disk (`false` if the file is gone or the flush failed).
    @discardableResult
    func flush() -> Bool {
        let descriptor = systemOpen(url.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return Self.synchronize(descriptor)
    }

    /// Flushes the bytes written to `descriptor`'s file to permanent storage, so that resume data naming them stays
    /// true across a power loss, not only a crash.
    ///
    /// On Apple platforms `fsync(2)` only hands the bytes to the drive, which may still hold them in its cache and
    /// write them in another order; `fcntl(F_FULLFSYNC)` asks the drive to flush that cache too. Where the file
    /// system does not support it (some network and FUSE volumes), it falls back to `fsync`. Elsewhere, `fsync`
    /// flushes the drive's cache itself.
    ///
    /// - Returns: whether the flush succeeded.
    static func synchronize(_ descriptor: Int32) -> Bool {
        #if canImport(Darwin)
        if fcntl(descriptor, F_FULLFSYNC) != -1 { return true }
        #endif
        return fsync(descriptor) == 0
    }

    /// Removes the partial file, if it is there: `unlink(2)`, which removes a file or a symbolic link (not what it
    /// points to), never a directory.
    func remove() {
        _ = unlink(url.path)
    }

    /// Removes the partial file as ``remove()`` does, unless a download in this process holds it (``claim(_:)``):
    /// that download writes, moves or removes it itself. The file is claimed while it is removed, so a resume of it
    /// started meanwhile is refused rather than write into a file that is then unlinked.
    ///
    /// - Returns: whether a file was removed.
    @discardableResult
    func removeUnlessInUse() -> Bool {
        guard Self.claim(url) else { return false }
        defer { Self.release(url) }
        return unlink(url.path) == 0
    }
}
