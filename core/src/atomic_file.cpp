// SPDX-License-Identifier: MIT
#include "vramlab/atomic_file.h"

#include "vramlab/errors.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>

namespace vramlab {

namespace {

std::string folderOf(const std::string& path)
{
    const auto slash = path.rfind('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

std::string nameOf(const std::string& path)
{
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string kindOf(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a folder";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "a device";
    if (S_ISFIFO(mode))
        return "a FIFO (named pipe)";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

[[noreturn]] void fail(const std::string& path, const std::string& why)
{
    throw InputError("", why, path);
}

/// A temporary we may delete: a regular file or folder named "<name>.tmp-<digits>".
bool isStale(const std::string& entry, const std::string& prefix)
{
    if (entry.size() <= prefix.size() || entry.compare(0, prefix.size(), prefix) != 0)
        return false;
    const std::string digits = entry.substr(prefix.size());
    if (digits.size() > 10 || digits.find_first_not_of("0123456789") != std::string::npos)
        return false;
    const long pid = std::stol(digits);
    if (pid <= 0 || pid > std::numeric_limits<pid_t>::max() || pid == ::getpid())
        return false; // not a pid kill() could check (a negative one names a process group)
    // ESRCH: no such process. EPERM means one runs (as someone else): keep its file.
    return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

} // namespace

std::string saveTarget(const std::string& path)
{
    if (path.empty())
        throw InputError("", "the file name is empty");
    std::string target = path;
    struct stat st { };
    for (int hops = 0;; ++hops) {
        if (::lstat(target.c_str(), &st) != 0) {
            if (errno == ENOENT)
                return target; // a new file (or the missing end of a dangling link)
            fail(path, std::string("cannot write here: ") + std::strerror(errno));
        }
        if (!S_ISLNK(st.st_mode))
            break;
        if (hops >= 40)
            fail(path, "too many levels of symbolic links");
        // Save through the link: its target gets the content and the link stays a link.
        std::string link(4096, '\0');
        const ssize_t n = ::readlink(target.c_str(), link.data(), link.size());
        if (n < 0 || static_cast<size_t>(n) >= link.size())
            fail(path, std::string("cannot read the symbolic link: ") + std::strerror(n < 0 ? errno : ENAMETOOLONG));
        link.resize(static_cast<size_t>(n));
        target = link.front() == '/' ? link : folderOf(target) + "/" + link;
        if (char* real = ::realpath(target.c_str(), nullptr)) { // the link resolves: its canonical target
            target = real;
            std::free(real);
        }
    }
    const std::string which = target == path ? "" : " (the target of the link, " + target + ")";
    if (!S_ISREG(st.st_mode))
        fail(path, "is " + kindOf(st.st_mode) + which + ", not a regular file; refusing to replace it");
    if ((st.st_mode & 0222) == 0)
        fail(path, "is read-only" + which + "; make it writable to replace it");
    return target;
}

std::string temporaryPathFor(const std::string& target)
{
    return target + ".tmp-" + std::to_string(::getpid());
}

void removeStaleTemporaries(const std::string& target)
{
    const std::string folder = folderOf(target);
    const std::string prefix = nameOf(target) + ".tmp-";
    DIR* dir = ::opendir(folder.c_str());
    if (!dir)
        return;
    while (const dirent* e = ::readdir(dir)) {
        const std::string entry = e->d_name;
        if (!isStale(entry, prefix))
            continue;
        const std::string full = folder + "/" + entry;
        struct stat st { };
        if (::lstat(full.c_str(), &st) != 0)
            continue;
        std::error_code ec;
        if (S_ISREG(st.st_mode))
            ::unlink(full.c_str());
        else if (S_ISDIR(st.st_mode))
            std::filesystem::remove_all(full, ec); // a killed Markdown export's image folder
    }
    ::closedir(dir);
}

void syncFolderOf(const std::string& path)
{
    const int fd = ::open(folderOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    ::fsync(fd); // best effort: some file systems refuse fsync on folders (EINVAL)
    ::close(fd);
}

void writeFileAtomically(const std::string& path, const std::string& text)
{
    const std::string target = saveTarget(path);
    removeStaleTemporaries(target);
    struct stat old { };
    const bool replacing = ::stat(target.c_str(), &old) == 0;
    const std::string tmp = temporaryPathFor(target);
    ::unlink(tmp.c_str()); // ours by name (this pid); O_EXCL then never follows a planted link
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        fail(path, std::string("cannot write here: ") + std::strerror(errno));
    auto abandon = [&](const std::string& why) {
        ::close(fd);
        ::unlink(tmp.c_str());
        fail(path, why);
    };
    for (size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            abandon(std::string("write failed: ") + std::strerror(n < 0 ? errno : EIO));
        done += static_cast<size_t>(n);
    }
    if (replacing && ::fchmod(fd, old.st_mode & 07777) != 0)
        abandon(std::string("cannot keep the file's permissions: ") + std::strerror(errno));
    // fsync before rename: otherwise a crash can leave the new name with no data.
    if (::fsync(fd) != 0)
        abandon(std::string("write failed: ") + std::strerror(errno));
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        fail(path, std::string("write failed: ") + std::strerror(err));
    }
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        fail(path, std::string("cannot replace the file: ") + std::strerror(err));
    }
    syncFolderOf(target);
}

} // namespace vramlab
