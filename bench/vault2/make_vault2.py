#!/usr/bin/env python3
"""make_vault2.py OUT_DIR -- build a development "second brain" vault of Markdown notes from real text on
this machine: GNU info manuals (/usr/share/info), Python's language reference topics (pydoc_data.topics)
and Markdown/reST docs shipped inside site-packages. Handwritten glue (projects, people, meeting
decisions, journal lines, stubs) ties them together; meeting turns are real sentences from the notes.
Deterministic: sorted inputs, fixed seed, no set iteration. Prints a digest of all paths+contents.
"""
import glob
import gzip
import hashlib
import random
import re
import sys
import sysconfig
from datetime import date, timedelta
from pathlib import Path

import pydoc_data.topics

SEED = 4702
SITE = sysconfig.get_paths()['purelib']  # the queries were written on /root/.pyenv/versions/3.11.7's

SKIP = {'Top', 'GNU Free Documentation License', 'Concept index', 'Concept Index', 'Index',
        'Primary Index', 'Copying This Manual', 'Copying this manual', 'Command and Option Index',
        'Copying', 'Translations'}
MANUALS = {
    'coreutils': dict(skip={'Introduction', 'SELinux context', 'Working context', 'User information'},
                      skipnodes={'ptx invocation', 'Multi-call invocation', 'tsort background', 'yes invocation',
                                 'Authors of parse_datetime', 'The uniq command'},
                      long={'sort invocation', 'ls invocation', 'Version sort ordering'}),
    'find': dict(skip={'File Permissions', 'Date input formats', 'Configuration', 'Introduction', 'Databases'},
                 skipnodes={'Error Messages From updatedb', 'Error Messages From locate', 'Further Reading on Security'},
                 long={'Regular Expressions'}),
    'diffutils': dict(skip={'Standards conformance', 'Projects'}, skipnodes=set(), long=set()),
    'sed': dict(skip={'Reporting Bugs', 'Limitations', 'Introduction'}, skipnodes=set(), long=set()),
    'grep': dict(skip={'Reporting Bugs', 'Introduction'}, skipnodes=set(), long=set()),
    'wget': dict(skip={'Various', 'Appendices'}, skipnodes=set(), long={'Download Options'}),
    'bc': dict(skip=set(), skipnodes=set(), long=set()),
    'ed': dict(skip=set(), skipnodes=set(), long=set()),
    'bzip2': dict(skip={'Miscellanea', 'Programming with libbzip2'}, skipnodes={'NAME', 'SYNOPSIS', 'AUTHOR'}, long=set()),
    'gzip': dict(skip={'Problems', 'Tapes'}, skipnodes=set(), long=set()),
    'time': dict(skip={'Reporting bugs'}, skipnodes=set(), long=set()),
    'rluserman': dict(skip=set(), skipnodes={'Keyboard Macros'}, long=set()),
}
UNIT_MAX = 9000

def load_info(base):
    files = sorted(glob.glob(f'/usr/share/info/{base}.info*.gz'))
    files.sort(key=lambda f: (0 if f.endswith('.info.gz') else int(re.search(r'-(\d+)\.gz$', f).group(1))))
    text = ''.join(gzip.open(f, 'rt', encoding='utf-8', errors='replace').read() for f in files)
    out = []
    for chunk in text.split('\x1f'):
        chunk = chunk.lstrip('\n')
        m = re.match(r'File: [^,]+,\s+Node: ([^,\n]+)(.*)\n', chunk)
        if not m:
            continue
        up = re.search(r'Up: ([^,\n]+)', m.group(2))
        out.append(dict(name=m.group(1).strip(), up=(up.group(1).strip() if up else ''), text=chunk[m.end():]))
    return out

# (manual, first node) -> (title, stem or None); None title = drop the unit
TITLES = {
    ('coreutils', 'Common options'): ("Options every GNU tool understands", 'common-options'),
    ('coreutils', 'Exit status'): ("Exit codes and the backup suffix options", 'exit-status-and-backups'),
    ('coreutils', 'Block size'): ("Why df and du print sizes in blocks", 'block-size'),
    ('coreutils', 'Floating point'): ("Signals, floating point and user/group names in coreutils", 'signals-and-ids'),
    ('coreutils', 'Random sources'): ("Random sources and the target directory option", 'random-sources-target-dir'),
    ('coreutils', 'Trailing slashes'): ("Trailing slashes, symlinked dirs and the root directory", 'trailing-slashes'),
    ('coreutils', 'cat invocation'): ("Printing files front to back and back to front", 'cat-tac'),
    ('coreutils', 'nl invocation'): ("Numbering the lines of a file", 'nl'),
    ('coreutils', 'od invocation'): ("Dumping a file in octal or hex", 'od'),
    ('coreutils', 'base32 invocation'): ("Encoding binary data as printable text", 'base64'),
    ('coreutils', 'fmt invocation'): ("Reflowing paragraphs to a width", 'fmt'),
    ('coreutils', 'pr invocation'): ("Paginating files for printing with pr", 'pr'),
    ('coreutils', 'fold invocation'): (None, None),
    ('coreutils', 'head invocation'): ("Showing only the beginning of a file", 'head'),
    ('coreutils', 'tail invocation'): ("Following the end of a growing log file", 'tail'),
    ('coreutils', 'split invocation'): ("Cutting a big file into fixed-size chunks", 'split'),
    ('coreutils', 'csplit invocation'): ("Splitting a file where a pattern matches", 'csplit'),
    ('coreutils', 'wc invocation'): ("Counting lines, words and bytes", 'wc'),
    ('coreutils', 'cksum invocation'): ("CRC checksums and BLAKE2 digests", 'cksum'),
    ('coreutils', 'md5sum invocation'): ("Checking file integrity against a list of digests", 'md5sum'),
    ('coreutils', 'sha1sum invocation'): ("SHA-1 and SHA-2 digest commands", 'sha2-utilities'),
    ('coreutils', 'sort invocation'): ("Sorting lines: keys, numeric order, stability (full reference)", 'sort'),
    ('coreutils', 'shuf invocation'): ("Shuffling lines into random order", 'shuf'),
    ('coreutils', 'uniq invocation'): ("Dropping or counting repeated lines", 'uniq'),
    ('coreutils', 'comm invocation'): ("Comparing two sorted lists line by line", 'comm'),
    ('coreutils', 'tsort invocation'): ("Topological sort of dependency pairs", 'tsort'),
    ('coreutils', 'cut invocation'): ("Pulling columns out of each line", 'cut'),
    ('coreutils', 'paste invocation'): ("Gluing files together side by side", 'paste'),
    ('coreutils', 'General options in join'): ("Joining two files on a shared field", 'join'),
    ('coreutils', 'Sorting files for join'): ("Preparing input for join", 'join-sorting'),
    ('coreutils', 'Paired and unpaired lines'): ("join: unpaired lines, headers and set operations", 'join-unpaired'),
    ('coreutils', 'tr invocation'): ("Character translation basics", 'tr'),
    ('coreutils', 'Character arrays'): ("tr character classes and ranges", 'tr-arrays'),
    ('coreutils', 'Translating'): ("Squeezing and deleting characters with tr", 'tr-squeeze-delete'),
    ('coreutils', 'expand invocation'): ("Tabs to spaces and back", 'expand-unexpand'),
    ('coreutils', 'ls invocation'): ("Everything about listing directories (ls reference)", 'ls'),
    ('coreutils', 'dir invocation'): ("dir, vdir and setting up ls colours", 'dircolors'),
    ('coreutils', 'cp invocation'): ("Copying files and whole trees", 'cp'),
    ('coreutils', 'dd invocation'): ("Low-level copying and converting with dd", 'dd'),
    ('coreutils', 'install invocation'): ("Copying files into place with modes set", 'install'),
    ('coreutils', 'mv invocation'): ("Moving and renaming files", 'mv'),
    ('coreutils', 'rm invocation'): ("Removing files and directories safely", 'rm'),
    ('coreutils', 'shred invocation'): ("Overwriting a file so it can't be recovered", 'shred'),
    ('coreutils', 'link invocation'): (None, None),
    ('coreutils', 'ln invocation'): ("Making hard and symbolic links", 'ln'),
    ('coreutils', 'mkdir invocation'): ("Creating directories and named pipes", 'mkdir'),
    ('coreutils', 'mknod invocation'): (None, None),
    ('coreutils', 'readlink invocation'): ("Resolving symlinks, removing empty dirs and unlinking", 'readlink'),
    ('coreutils', 'chown invocation'): ("Changing who owns a file", 'chown'),
    ('coreutils', 'chgrp invocation'): ("Changing the group of files", 'chgrp'),
    ('coreutils', 'chmod invocation'): ("Changing permissions with chmod", 'chmod'),
    ('coreutils', 'touch invocation'): ("Updating file timestamps with touch", 'touch'),
    ('coreutils', 'df invocation'): ("How full are my disks", 'df'),
    ('coreutils', 'du invocation'): ("Finding what is using disk space", 'du'),
    ('coreutils', 'stat invocation'): ("Inspecting file metadata with stat", 'stat'),
    ('coreutils', 'sync invocation'): ("Flushing writes and resizing files", 'sync-truncate'),
    ('coreutils', 'Printing text'): ("Printing text from scripts: echo and printf", 'echo-printf'),
    ('coreutils', 'false invocation'): (None, None),
    ('coreutils', 'test invocation'): ("Conditions in shell scripts with test", 'test'),
    ('coreutils', 'expr invocation'): ("Arithmetic and string matching with expr", 'expr'),
    ('coreutils', 'Redirection'): ("Writing output to a file and the screen at once", 'tee'),
    ('coreutils', 'basename invocation'): ("Taking file names apart", 'basename-dirname'),
    ('coreutils', 'mktemp invocation'): ("Creating temporary files safely", 'mktemp'),
    ('coreutils', 'realpath invocation'): ("Getting the canonical absolute path", 'realpath'),
    ('coreutils', 'date invocation'): ("Printing the date in a custom format", 'date'),
    ('coreutils', 'Time conversion specifiers'): ("date: time-of-day format codes", 'date-time-specifiers'),
    ('coreutils', 'Date conversion specifiers'): ("date: calendar format codes", 'date-calendar-specifiers'),
    ('coreutils', 'Padding and other flags'): ("date: padding flags and setting the clock", 'date-padding'),
    ('coreutils', 'Options for date'): ("date options: other times than now", 'date-options'),
    ('coreutils', 'Examples of date'): ("date recipes", 'date-examples'),
    ('coreutils', 'arch invocation'): ("What machine am I on: uname, nproc, hostname", 'uname'),
    ('coreutils', 'uptime invocation'): (None, None),
    ('coreutils', 'chroot invocation'): ("Running a command under a different root", 'chroot'),
    ('coreutils', 'env invocation'): ("Running a command with a changed environment", 'env'),
    ('coreutils', 'nice invocation'): ("Lowering a job's CPU priority", 'nice'),
    ('coreutils', 'nohup invocation'): ("Keeping a job alive after logout", 'nohup'),
    ('coreutils', 'stdbuf invocation'): ("Changing the buffering of a command's streams", 'stdbuf'),
    ('coreutils', 'timeout invocation'): ("Killing a command that runs too long", 'timeout'),
    ('coreutils', 'Process control'): ("Sending signals and sleeping", 'kill-sleep'),
    ('coreutils', 'factor invocation'): (None, None),
    ('coreutils', 'numfmt invocation'): ("Converting numbers to and from human-readable units", 'numfmt'),
    ('coreutils', 'seq invocation'): ("Generating number sequences", 'seq'),
    ('coreutils', 'Mode Structure'): ("How Unix permission bits are laid out", 'mode-structure'),
    ('coreutils', 'Symbolic Modes'): ("Symbolic permission changes like u+x", 'symbolic-modes'),
    ('coreutils', 'Numeric Modes'): ("Octal permission numbers", 'numeric-modes'),
    ('coreutils', 'Directory Setuid and Setgid'): ("setgid on directories and group inheritance", 'directory-setgid'),
    ('coreutils', 'File timestamps'): ("The three timestamps every file has", 'file-timestamps'),
    ('coreutils', 'Date input formats'): ("What date strings GNU tools accept", 'date-input-formats'),
    ('coreutils', 'General date syntax'): ("Date strings: general rules and calendar dates", 'date-syntax'),
    ('coreutils', 'Time of day items'): ("Date strings: times, zones and weekdays", 'date-time-items'),
    ('coreutils', 'Relative items in date strings'): ("Date strings: relative dates and epoch seconds", 'relative-dates'),
    ('coreutils', 'Specifying time zone rules'): ("Setting TZ rules explicitly", 'tz-rules'),
    ('coreutils', 'Version sort ordering'): ("How version sort orders file names (long read)", 'version-sort'),
    ('coreutils', 'Toolbox introduction'): (None, None),
    ('coreutils', 'I/O redirection'): (None, None),
    ('coreutils', 'Putting the tools together'): ("Software tools essay: building pipelines", 'software-tools-pipelines'),
    ('find', 'find Expressions'): ("Anatomy of a find expression", 'find-expressions'),
    ('find', 'Starting points'): ("Where find starts looking", 'find-starting-points'),
    ('find', 'Base Name Patterns'): ("Matching file names and whole paths in find", 'find-name-patterns'),
    ('find', 'Fast Full Name Search'): ("locate and shell wildcards", 'locate-and-wildcards'),
    ('find', 'Links'): ("Finding symlinks and hard links", 'find-links'),
    ('find', 'Time'): ("Finding files by age", 'find-by-age'),
    ('find', 'Size'): ("Finding files by size, type and owner", 'find-size-type-owner'),
    ('find', 'Mode Bits'): ("Finding files by permission bits", 'find-mode-bits'),
    ('find', 'Contents'): (None, None),
    ('find', 'Directories'): ("Controlling how deep find descends", 'find-directories'),
    ('find', 'Filesystems'): ("Staying on one filesystem; and/or/not in find", 'find-operators'),
    ('find', 'Print File Name'): ("How find decides what to print", 'find-printing'),
    ('find', 'Escapes'): (None, None),
    ('find', 'Format Directives'): ("find -printf directives", 'find-printf'),
    ('find', 'Time Formats'): ("find -printf time formats", 'find-printf-time'),
    ('find', 'Single File'): ("Running a command on each found file", 'find-exec'),
    ('find', 'Multiple Files'): ("Running one command on many found files", 'find-exec-multiple'),
    ('find', 'Unsafe File Name Handling'): ("Safe and unsafe file name passing to xargs", 'xargs-null'),
    ('find', 'Unusual Characters in File Names'): ("File names with spaces and newlines", 'unusual-file-names'),
    ('find', 'Limiting Command Size'): ("Keeping xargs command lines short", 'xargs-limits'),
    ('find', 'Controlling Parallelism'): ("Running xargs jobs in parallel", 'xargs-parallel'),
    ('find', 'Interspersing File Names'): ("Putting the file name in the middle of the command", 'xargs-replace'),
    ('find', 'Querying'): ("Asking before running each command", 'find-ok'),
    ('find', 'Delete Files'): ("Deleting what find found, and custom tests", 'find-delete'),
    ('find', 'Invoking find'): ("find command line reference", 'find-invocation'),
    ('find', 'Invoking locate'): ("locate command line reference", 'locate'),
    ('find', 'Invoking updatedb'): ("Building the locate database", 'updatedb'),
    ('find', 'xargs options'): ("xargs options reference", 'xargs'),
    ('find', 'Conflicting xargs options'): ("xargs: conflicting options and calling a shell", 'xargs-shell'),
    ('find', 'Regular Expressions'): ("Regex dialects in findutils (long)", 'findutils-regex'),
    ('find', 'Environment Variables'): ("Environment variables findutils looks at", 'findutils-env'),
    ('find', 'Viewing And Editing'): ("find recipes: opening and archiving files", 'find-recipes'),
    ('find', 'Cleaning Up'): ("find recipes: cleanup and fixing permissions", 'find-cleanup'),
    ('find', 'Deleting Files'): ("Worked example: deleting files efficiently", 'find-deleting-example'),
    ('find', 'Copying A Subset of Files'): ("Copying only some files of a tree", 'copy-subset'),
    ('find', 'Updating A Timestamp File'): ("Worked example: a timestamp file for incremental jobs", 'timestamp-file'),
    ('find', 'Finding the Shallowest Instance'): ("Finding the shallowest matching directory", 'shallowest-instance'),
    ('find', 'Levels of Risk'): ("How exposed is find to attackers", 'find-risk'),
    ('find', 'Security Considerations for find'): ("find security overview", 'find-security'),
    ('find', 'Problems with -exec and filenames'): ("-exec and hostile file names", 'exec-filenames'),
    ('find', 'Changing the Current Working Directory'): ("Changing directory safely while walking a tree", 'safe-chdir'),
    ('find', 'Race Conditions with -exec'): ("Race conditions when find runs commands", 'find-races'),
    ('find', 'Security Considerations for xargs'): ("xargs and locate security, summary", 'xargs-security'),
    ('find', 'Error Messages'): ("What find and xargs error messages mean", 'find-errors'),
    ('diffutils', 'Overview'): ("diffutils overview", 'diffutils-overview'),
    ('diffutils', 'Comparison'): ("What counts as a difference", 'diff-comparison'),
    ('diffutils', 'Hunks'): ("Ignoring whitespace, blank lines and case in diff", 'diff-ignoring'),
    ('diffutils', 'Brief'): ("Just telling whether files differ; binary files", 'diff-brief-binary'),
    ('diffutils', 'Sample diff Input'): (None, None),
    ('diffutils', 'Context Format'): ("Context diff format", 'context-format'),
    ('diffutils', 'Unified Format'): ("Unified diff format", 'unified-format'),
    ('diffutils', 'Sections'): ("Showing which function a hunk is in", 'diff-sections'),
    ('diffutils', 'Side by Side'): ("Two-column diff output", 'side-by-side'),
    ('diffutils', 'Normal'): ("The default diff output format", 'normal-format'),
    ('diffutils', 'Scripts'): ("diff output as ed scripts", 'ed-scripts'),
    ('diffutils', 'If-then-else'): (None, None),
    ('diffutils', 'Line Group Formats'): ("Merged #ifdef output: line group formats", 'line-group-formats'),
    ('diffutils', 'Line Formats'): ("Merged #ifdef output: line formats", 'line-formats'),
    ('diffutils', 'Incomplete Lines'): ("Missing final newline; comparing directories", 'diff-directories'),
    ('diffutils', 'Adjusting Output'): ("Tabs and trailing blanks in diff output", 'diff-tabs'),
    ('diffutils', 'diff Performance'): ("Making diff faster or smaller", 'diff-performance'),
    ('diffutils', 'Comparing Three Files'): ("Comparing three versions of a file", 'diff3-compare'),
    ('diffutils', 'diff3 Merging'): ("Merging with diff3", 'diff3-merging'),
    ('diffutils', 'Interactive Merging'): ("Merging interactively with sdiff", 'sdiff-merging'),
    ('diffutils', 'Merging with patch'): ("Applying a patch", 'patch-basics'),
    ('diffutils', 'patch Input'): ("What patch accepts as input", 'patch-input'),
    ('diffutils', 'Imperfect'): ("When a patch doesn't apply cleanly", 'patch-imperfect'),
    ('diffutils', 'Creating and Removing'): ("Patches that create or delete files; timestamps", 'patch-create-remove'),
    ('diffutils', 'Multiple Patches'): ("Several patches, directories and backups", 'patch-multiple'),
    ('diffutils', 'Backup Names'): ("Backup and reject file names from patch", 'patch-backup-names'),
    ('diffutils', 'patch Messages'): ("patch messages and POSIX mode", 'patch-messages'),
    ('diffutils', 'patch and Tradition'): (None, None),
    ('diffutils', 'Making Patches'): ("Tips for sending patches", 'making-patches'),
    ('diffutils', 'Invoking cmp'): ("Byte-by-byte comparison with cmp", 'cmp'),
    ('diffutils', 'Invoking diff'): ("diff command line", 'diff-invocation'),
    ('diffutils', 'diff Options'): ("diff options reference", 'diff-options'),
    ('diffutils', 'Invoking diff3'): ("diff3 command line", 'diff3'),
    ('diffutils', 'Invoking patch'): ("patch command line reference", 'patch'),
    ('diffutils', 'Invoking sdiff'): ("sdiff command line", 'sdiff'),
    ('sed', 'Overview'): ("sed in a nutshell", 'sed-overview'),
    ('sed', 'Command-Line Options'): ("sed command-line options", 'sed-options'),
    ('sed', 'Exit status'): ("sed exit codes", 'sed-exit-status'),
    ('sed', 'sed script overview'): ("How a sed script is structured", 'sed-scripts'),
    ('sed', 'sed commands list'): ("All sed commands at a glance", 'sed-commands'),
    ('sed', 'The "s" Command'): ("Search and replace with sed s///", 'sed-substitute'),
    ('sed', 'Common Commands'): ("The sed commands I actually use", 'sed-common-commands'),
    ('sed', 'Other Commands'): ("Less common sed commands", 'sed-other-commands'),
    ('sed', 'Programming Commands'): ("sed labels, branches and GNU extensions", 'sed-extended-commands'),
    ('sed', 'Multiple commands syntax'): ("Putting several commands in one sed script", 'sed-multiple-commands'),
    ('sed', 'Addresses overview'): ("Selecting lines in sed by number", 'sed-addresses'),
    ('sed', 'Regexp Addresses'): ("Selecting lines in sed by pattern", 'sed-regexp-addresses'),
    ('sed', 'Range Addresses'): ("Line ranges in sed", 'sed-ranges'),
    ('sed', 'Regular Expressions Overview'): ("Basic vs extended regex in sed", 'sed-bre-ere'),
    ('sed', 'BRE syntax'): ("Basic regular expression syntax", 'bre-syntax'),
    ('sed', 'ERE syntax'): (None, None),
    ('sed', 'Character Classes and Bracket Expressions'): ("Bracket expressions and [:classes:]", 'sed-bracket-expressions'),
    ('sed', 'regexp extensions'): ("GNU regex extensions like \\w and \\b", 'regexp-extensions'),
    ('sed', 'Back-references and Subexpressions'): ("Back-references in sed replacements", 'sed-backreferences'),
    ('sed', 'Escapes'): ("Escape sequences in sed", 'sed-escapes'),
    ('sed', 'Locale Considerations'): ("sed and multibyte locales", 'sed-locale'),
    ('sed', 'Execution Cycle'): ("Pattern space, hold space and multiline sed", 'sed-hold-space'),
    ('sed', 'Branching and flow control'): ("Loops and branching in sed", 'sed-branching'),
    ('grep', 'Generic Program Information'): ("Controlling what grep matches", 'grep-matching'),
    ('grep', 'General Output Control'): ("Controlling what grep prints", 'grep-output'),
    ('grep', 'Context Line Control'): ("Showing lines around a grep match", 'grep-context'),
    ('grep', 'File and Directory Selection'): ("Searching directory trees with grep", 'grep-recursive'),
    ('grep', 'Other Options'): ("grep: line buffering, NUL data and other options", 'grep-other-options'),
    ('grep', 'Environment Variables'): ("Environment variables grep reads", 'grep-env'),
    ('grep', 'Exit Status'): ("grep exit status and egrep/fgrep", 'grep-exit-status'),
    ('grep', 'Fundamental Structure'): ("grep regex building blocks", 'grep-regex-structure'),
    ('grep', 'Character Classes and Bracket Expressions'): ("grep bracket expressions, backslash escapes, anchors", 'grep-brackets'),
    ('grep', 'Back-references and Subexpressions'): ("grep back-references; basic vs extended", 'grep-backrefs'),
    ('grep', 'Problematic Expressions'): ("Regex corner cases that bite", 'problematic-regex'),
    ('grep', 'Character Encoding'): ("grep with encodings and non-ASCII text", 'grep-encoding'),
    ('grep', 'Usage'): ("grep FAQ", 'grep-faq'),
    ('grep', 'Performance'): ("Why grep is slow sometimes", 'grep-performance'),
    ('wget', 'Overview'): ("What wget can do", 'wget-overview'),
    ('wget', 'URL Format'): ("URL forms wget understands", 'wget-urls'),
    ('wget', 'Option Syntax'): ("wget option syntax and startup options", 'wget-option-syntax'),
    ('wget', 'Logging and Input File Options'): ("wget logging and reading URLs from a file", 'wget-logging'),
    ('wget', 'Download Options'): ("wget download options (the big list)", 'wget-download-options'),
    ('wget', 'Directory Options'): ("Where wget saves files", 'wget-directories'),
    ('wget', 'HTTP Options'): ("wget HTTP options", 'wget-http'),
    ('wget', 'HTTPS (SSL/TLS) Options'): ("wget TLS and certificate options", 'wget-https'),
    ('wget', 'FTP Options'): ("wget FTP options", 'wget-ftp'),
    ('wget', 'Recursive Retrieval Options'): ("Recursive retrieval and mirroring options", 'wget-recursive-options'),
    ('wget', 'Recursive Accept/Reject Options'): ("Accept and reject lists for recursive downloads", 'wget-accept-reject'),
    ('wget', 'Recursive Download'): ("How recursive download works", 'wget-recursive'),
    ('wget', 'Spanning Hosts'): ("Letting wget follow links to other hosts", 'wget-spanning-hosts'),
    ('wget', 'Types of Files'): ("Downloading only certain file types", 'wget-file-types'),
    ('wget', 'Directory-Based Limits'): ("Limiting a crawl to some directories", 'wget-directory-limits'),
    ('wget', 'Time-Stamping'): ("Only re-downloading files that changed", 'wget-timestamping'),
    ('wget', 'Wgetrc Location'): ("Where the wgetrc lives and its syntax", 'wgetrc'),
    ('wget', 'Wgetrc Commands'): ("wgetrc settings reference", 'wgetrc-commands'),
    ('wget', 'Sample Wgetrc'): ("Example wgetrc", 'sample-wgetrc'),
    ('wget', 'Examples'): ("wget recipes", 'wget-examples'),
    ('bc', 'Introduction'): ("bc basics: numbers, variables, comments", 'bc-basics'),
    ('bc', 'Expressions'): ("bc expressions, scale and operator precedence", 'bc-expressions'),
    ('bc', 'Statements'): ("bc statements and control flow", 'bc-statements'),
    ('bc', 'Functions'): ("Defining functions in bc; the math library", 'bc-functions'),
    ('bc', 'Examples'): ("bc example programs", 'bc-examples'),
    ('bc', 'Comparison with Other Implementations'): (None, None),
    ('bc', 'Limits'): ("bc limits and environment", 'bc-limits'),
    ('ed', 'Overview'): ("ed, the standard line editor", 'ed-overview'),
    ('ed', 'Introduction to line editing'): ("A first session with ed", 'ed-tutorial'),
    ('ed', 'Invoking ed'): ("Starting ed", 'ed-invocation'),
    ('ed', 'Line addressing'): ("Addressing lines in ed", 'ed-addressing'),
    ('ed', 'Regular expressions'): ("Regular expressions in ed", 'ed-regex'),
    ('ed', 'Commands'): ("ed command reference", 'ed-commands'),
    ('ed', "The 's' Command"): ("Substitution in ed, limits and diagnostics", 'ed-substitute'),
    ('bzip2', 'Introduction'): (None, None),
    ('bzip2', 'DESCRIPTION'): ("How bzip2 compresses", 'bzip2'),
    ('bzip2', 'OPTIONS'): ("bzip2 options", 'bzip2-options'),
    ('bzip2', 'MEMORY MANAGEMENT'): ("bzip2 memory use and recovering damaged archives", 'bzip2-memory'),
    ('bzip2', 'PERFORMANCE NOTES'): ("bzip2 performance and caveats", 'bzip2-performance'),
    ('gzip', 'Overview'): ("gzip overview", 'gzip'),
    ('gzip', 'Sample'): ("gzip --help output", 'gzip-help'),
    ('gzip', 'Invoking gzip'): ("gzip options", 'gzip-options'),
    ('gzip', 'Advanced usage'): ("Concatenating gzip files; GZIP env var", 'gzip-advanced'),
    ('time', 'Resource Measurement'): ("Measuring how long a command takes", 'time'),
    ('time', 'Setting Format'): ("time output format", 'time-format'),
    ('time', 'Examples'): ("time examples and accuracy", 'time-examples'),
    ('rluserman', 'Introduction and Notation'): (None, None),
    ('rluserman', 'Readline Interaction'): ("Line editing keys in the shell", 'readline-basics'),
    ('rluserman', 'Readline Init File Syntax'): ("inputrc variables and key bindings", 'inputrc'),
    ('rluserman', 'Conditional Init Constructs'): ("Conditionals in inputrc", 'inputrc-conditionals'),
    ('rluserman', 'Sample Init File'): ("Example inputrc", 'sample-inputrc'),
    ('rluserman', 'Commands For Moving'): ("Readline: moving around", 'readline-moving'),
    ('rluserman', 'Commands For History'): ("Readline: history commands", 'readline-history'),
    ('rluserman', 'Commands For Text'): ("Readline: editing text", 'readline-text'),
    ('rluserman', 'Commands For Killing'): ("Readline: kill, yank, numeric args, completion", 'readline-killing'),
    ('rluserman', 'Miscellaneous Commands'): ("Readline: odd commands", 'readline-misc'),
    ('rluserman', 'Readline vi Mode'): (None, None),
}
# pydoc_data topic groups: (topic keys, title, stem, subfolder)
PY_GROUPS = [
    (['assert'], "Sanity checks that vanish with -O", 'py-assert', 'Statements'),
    (['assignment'], "How assignment really works in Python", 'py-assignment', 'Statements'),
    (['augassign'], "In-place operators like +=", 'py-augassign', 'Statements'),
    (['break', 'continue', 'pass'], "Leaving and skipping loop iterations", 'py-break-continue', 'Statements'),
    (['del'], "Deleting names and items", 'py-del', 'Statements'),
    (['global', 'nonlocal'], "Rebinding variables from an outer scope", 'py-global-nonlocal', 'Statements'),
    (['return', 'yield'], "Returning values and generator yield", 'py-return-yield', 'Statements'),
    (['raise'], "Raising and chaining exceptions", 'py-raise', 'Statements'),
    (['import'], "What import actually does", 'py-import', 'Statements'),
    (['if', 'while'], "if and while statements", 'py-if-while', 'Statements'),
    (['for'], "for loops and their else clause", 'py-for', 'Statements'),
    (['try'], "try/except/finally semantics", 'py-try', 'Statements'),
    (['with'], "The with statement", 'py-with', 'Statements'),
    (['function'], "Defining functions: defaults, decorators, annotations", 'py-function-def', 'Statements'),
    (['class'], "Defining classes", 'py-class-def', 'Statements'),
    (['async', 'await'], "Coroutines, async for and async with", 'py-async', 'Statements'),
    (['atom-identifiers', 'atom-literals', 'attribute-references'], "Names, literals and attribute references as atoms", 'py-atoms', 'Expressions'),
    (['binary', 'unary', 'power'], "Arithmetic operators and the power operator", 'py-arithmetic', 'Expressions'),
    (['bitwise', 'shifting'], "Bitwise and shift operators", 'py-bitwise', 'Expressions'),
    (['booleans', 'truth'], "and, or, not and what counts as true", 'py-booleans', 'Expressions'),
    (['calls'], "What happens in a function call", 'py-calls', 'Expressions'),
    (['comparisons', 'in'], "Comparing values and membership tests", 'py-comparisons', 'Expressions'),
    (['conversions', 'exprlists'], "Arithmetic conversions and expression lists", 'py-conversions', 'Expressions'),
    (['lambda'], None, None, 'Expressions'),
    (['lists', 'dict'], "List and dict displays", 'py-displays', 'Expressions'),
    (['slicings', 'subscriptions'], "Indexing and slicing", 'py-subscriptions', 'Expressions'),
    (['operator-summary'], "Operator precedence table", 'py-operator-precedence', 'Expressions'),
    (['numbers', 'integers', 'floating', 'imaginary'], "Numeric literals", 'py-numeric-literals', 'Lexical'),
    (['strings'], "String and bytes literals, raw strings, escapes", 'py-string-literals', 'Lexical'),
    (['identifiers', 'id-classes'], "Identifiers, keywords and underscore names", 'py-identifiers', 'Lexical'),
    (['formatstrings'], "Format string mini-language (long)", 'py-format-strings', 'Lexical'),
    (['objects'], "Objects, values and types", 'py-objects', 'Data model'),
    (['types'], "The standard type hierarchy (long)", 'py-type-hierarchy', 'Data model'),
    (['customization'], "__init__, __repr__, __eq__, __hash__ and friends", 'py-customization', 'Data model'),
    (['attribute-access'], "Customizing attribute access and descriptors", 'py-attribute-access', 'Data model'),
    (['sequence-types', 'callable-types'], "Making a class act like a container", 'py-container-protocol', 'Data model'),
    (['numeric-types'], "Making a class act like a number", 'py-numeric-protocol', 'Data model'),
    (['context-managers'], "Writing context managers", 'py-context-managers', 'Data model'),
    (['specialattrs'], "Special attributes like __dict__ and __mro__", 'py-special-attributes', 'Data model'),
    (['execmodel', 'dynamic-features'], "Execution model: blocks, scopes and binding", 'py-execution-model', 'Execution'),
    (['naming'], None, None, 'Execution'),
    (['exceptions'], "How exceptions propagate", 'py-exceptions', 'Execution'),
    (['typesseq'], "list, tuple and range operations", 'py-sequence-types', 'Built-in types'),
    (['typesseq-mutable'], "Mutating list operations", 'py-mutable-sequences', 'Built-in types'),
    (['string-methods'], "str methods cheat sheet", 'py-str-methods', 'Built-in types'),
    (['typesmapping'], "dict methods and views", 'py-dict', 'Built-in types'),
    (['typesfunctions', 'typesmethods', 'typesmodules'], "Function, method and module objects", 'py-function-objects', 'Built-in types'),
    (['bltin-code-objects', 'bltin-ellipsis-object', 'bltin-null-object', 'bltin-type-objects'], "Odd built-in objects: code, Ellipsis, None, type", 'py-odd-objects', 'Built-in types'),
    (['debugger'], "Debugging Python with pdb", 'pdb', None),
]
# ---------------------------------------------------------------- handwritten parts
PEOPLE = [
    ("Ana Kovac", "Runs the backup and storage boxes. Knows every cron job on the file server by heart.",
     ["ops", "backups"]),
    ("Bilal Haddad", "Data engineer. Owns the log pipeline and the S3 migration; always asks what a change costs.",
     ["data", "aws"]),
    ("Chen Wei", "Python developer. Wrote most of the parser prototype and likes small, testable shell scripts.",
     ["python", "dev"]),
    ("Dana Okafor", "Team lead. Chairs most of the meetings and keeps the decision log honest.",
     ["lead"]),
    ("Eliot Marsh", "Security-minded; reviews anything that deletes files or runs as root.",
     ["security"]),
    ("Farah Nasser", "Looks after the internal docs site and the offline mirror for the lab machines.",
     ["docs", "web"]),
]

PROJECTS = [
    ("Nightly backup rotation", "active",
     "Rotate the nightly dumps on the file server: compress them, keep a manifest of digests, and prune old ones "
     "without ever touching the monthly snapshots.",
     ["bzip2", "gzip-options", "find-by-age", "find-delete", "md5sum", "sha2-utilities"],
     ["2023-09-14 Backup compression choice", "2023-10-03 Retention - what gets deleted and when",
      "2023-11-07 Checksums for the archive"],
     ["Ana Kovac", "Eliot Marsh"],
     ["- [x] pick compressor per backup type", "- [x] retention rule agreed", "- [ ] restore drill from a damaged archive",
      "- [ ] move manifests next to the archives"]),
    ("Offline docs mirror", "active",
     "Keep a browsable copy of the internal documentation site on the lab machines that have no network during exams.",
     ["wget-recursive", "wget-recursive-options", "wget-timestamping", "wget-spanning-hosts", "sample-wgetrc"],
     ["2024-01-16 Offline docs mirror kickoff"],
     ["Farah Nasser", "Chen Wei"],
     ["- [x] first full crawl", "- [ ] nightly refresh from cron", "- [ ] check that relative links survive"]),
    ("Log cleanup pipeline", "active",
     "Turn the raw application logs into a short morning report: strip noise, normalise, count recurring errors, "
     "and show what is new since yesterday.",
     ["sed-substitute", "grep-matching", "sort", "uniq", "comm", "cut"],
     ["2024-02-06 Log pipeline - dedup and counting", "2024-02-27 sed or ed for the config rewrite"],
     ["Bilal Haddad", "Ana Kovac"],
     ["- [x] normalise timestamps", "- [x] counting step", "- [ ] diff against yesterday", "- [ ] mail the report"]),
    ("S3 archive migration", "active",
     "Move the cold archive from the old NAS to a bucket, verify every object, and set up expiry rules.",
     ["s3-sync", "s3-transfer-config", "s3-faq", "s3-lifecycle", "s3-versioning", "aws-config-vars"],
     ["2024-05-14 S3 sync dry run review"],
     ["Bilal Haddad", "Ana Kovac", "Dana Okafor"],
     ["- [x] dry run", "- [ ] full sync", "- [ ] lifecycle rules", "- [ ] decommission the NAS share"]),
    ("Patch review workflow", "done",
     "Agree how we produce, send and apply patches for the config repository that is not under a forge.",
     ["unified-format", "making-patches", "patch", "patch-imperfect", "diff3-merging"],
     ["2024-03-19 Patch review conventions", "2024-04-09 Three-way merge of the vendor config"],
     ["Chen Wei", "Eliot Marsh"],
     ["- [x] conventions written down", "- [x] vendor merge done"]),
    ("Query language parser prototype", "paused",
     "A tiny filter language for the log report (field comparisons, and/or, parentheses). Prototype in Python.",
     ["pyparsing-best-practices", "libcst-conversions", "py-operator-precedence", "py-comparisons", "py-booleans"],
     ["2024-06-04 Parser prototype - grammar approach"],
     ["Chen Wei", "Bilal Haddad"],
     ["- [x] BNF draft", "- [ ] error messages with positions", "- [ ] decide on round-tripping"]),
    ("Shell script hardening", "active",
     "Go through every cron script and make it fail loudly and clean up after itself.",
     ["mktemp", "timeout", "test", "env", "xargs-null", "xargs-parallel"],
     ["2024-07-02 Shell script hardening", "2024-09-10 Dates and time zones in the report job",
      "2024-10-22 Parallel batch jobs with xargs"],
     ["Eliot Marsh", "Ana Kovac", "Chen Wei"],
     ["- [x] temp files", "- [x] timeouts", "- [ ] TZ in all crontabs", "- [ ] parallel thumbnails"]),
]

# (date, title, attendees, source stems, project, agenda, decisions, actions)
MEETINGS = [
    ("2023-09-14", "Backup compression choice", ["Dana Okafor", "Ana Kovac", "Eliot Marsh"],
     ["bzip2", "bzip2-memory", "gzip"], "Nightly backup rotation",
     "which compressor the backup rotation should use, and what the restore host can handle",
     ["Weekly full backups are compressed with bzip2 at its default block size.",
      "The nightly increments stay on gzip at level 6, because the restore host only has 2 GB of RAM.",
      "The small-memory switch is reserved for the old restore laptop; nobody uses it on the backup server."],
     ["Ana: change the rotation script so the compressor is chosen by backup type.",
      "Eliot: try a restore from a deliberately damaged archive with bzip2recover and write down the steps."]),
    ("2023-10-03", "Retention - what gets deleted and when", ["Dana Okafor", "Ana Kovac", "Eliot Marsh"],
     ["find-by-age", "find-delete", "find-deleting-example"], "Nightly backup rotation",
     "how long dumps are kept and how the cleanup job removes them",
     ["Incoming dumps older than 30 days are removed by the find job itself (-delete), not by piping names to rm.",
      "Monthly snapshots are kept for twelve months; the cleanup job must never descend into the monthly directory.",
      "Eliot reviews the cleanup command before it goes into cron."],
     ["Ana: dry-run the cleanup with -print for a week and mail the list.",
      "Eliot: review the prune expression for the monthly directory."]),
    ("2023-11-07", "Checksums for the archive", ["Ana Kovac", "Eliot Marsh", "Bilal Haddad"],
     ["md5sum", "sha2-utilities", "cksum"], "Nightly backup rotation",
     "how we prove an archive file is still intact",
     ["Every archive directory gets a SHA256SUMS manifest written at backup time.",
      "MD5 manifests are dropped entirely; old ones are regenerated with SHA-256.",
      "The weekly verification only reports failures, so the cron mail stays empty when all is well."],
     ["Ana: regenerate the old manifests.", "Bilal: reuse the manifests for the S3 upload check later."]),
    ("2024-01-16", "Offline docs mirror kickoff", ["Farah Nasser", "Dana Okafor", "Chen Wei"],
     ["wget-recursive", "wget-spanning-hosts", "wget-timestamping"], "Offline docs mirror",
     "how to keep a copy of the docs site on the exam-room machines",
     ["The mirror is refreshed nightly and only re-fetches pages that changed on the server.",
      "The crawl stays on the docs host; links to other sites are not followed.",
      "Recursion depth is capped at 4 levels."],
     ["Farah: write the wgetrc for the mirror.", "Chen: check that links inside the copy still work offline."]),
    ("2024-02-06", "Log pipeline - dedup and counting", ["Bilal Haddad", "Ana Kovac", "Chen Wei"],
     ["uniq", "sort", "comm"], "Log cleanup pipeline",
     "how the morning report counts errors and spots new ones",
     ["Error signatures are sorted and then counted; the 20 most frequent go at the top of the morning report.",
      "New errors are found by comparing today's sorted signatures with yesterday's and keeping only lines unique to today.",
      "Counts are case-sensitive for now."],
     ["Bilal: add the counting stage to the pipeline.", "Chen: keep yesterday's signature file around for the comparison."]),
    ("2024-02-27", "sed or ed for the config rewrite", ["Chen Wei", "Ana Kovac", "Eliot Marsh"],
     ["sed-substitute", "ed-commands", "sed-options"], "Log cleanup pipeline",
     "which editor the config rewrite scripts should use",
     ["One-line edits use sed in place with a backup suffix, so the previous file is always next to the new one.",
      "ed scripts are only used where a block of lines has to move.",
      "Every rewrite script must be idempotent: running it twice changes nothing the second time."],
     ["Chen: convert the three existing rewrite scripts.", "Eliot: check that backups are cleaned after a week."]),
    ("2024-03-19", "Patch review conventions", ["Chen Wei", "Dana Okafor", "Farah Nasser", "Eliot Marsh"],
     ["unified-format", "making-patches", "patch-imperfect"], "Patch review workflow",
     "how we produce and apply patches for the config repository",
     ["Patches are unified diffs with three lines of context, made from the top of the tree and applied with -p1.",
      "A patch that only applies with fuzz or offsets goes back to its author to be regenerated.",
      "Every patch mail says which base revision it was made against."],
     ["Chen: put the conventions in the repository README.", "Farah: add a one-page cheat sheet to the docs site."]),
    ("2024-04-09", "Three-way merge of the vendor config", ["Ana Kovac", "Chen Wei", "Eliot Marsh"],
     ["diff3-merging", "diff3-compare", "sdiff-merging"], "Patch review workflow",
     "merging the new vendor release of the config with our local changes",
     ["Vendor upgrades are merged three-way, with the previous vendor release as the common ancestor.",
      "Conflicts are resolved by hand, interactively; nobody blindly takes the vendor's side.",
      "The merged result is reviewed like any other patch before it is deployed."],
     ["Ana: keep a pristine copy of every vendor release.", "Chen: do the first merge and time it."]),
    ("2024-05-14", "S3 sync dry run review", ["Bilal Haddad", "Dana Okafor", "Ana Kovac"],
     ["s3-sync", "s3-transfer-config", "s3-faq"], "S3 archive migration",
     "what the dry run of the archive upload showed and what to change before the real run",
     ["The first full upload runs only after Bilal has read the complete dry-run log.",
      "Parallel requests are raised to 20, on the migration host only.",
      "We keep the tool's default integrity check and do not pick a custom algorithm."],
     ["Bilal: schedule the real run for a weekend.", "Ana: free up bandwidth on the NAS link that weekend."]),
    ("2024-06-04", "Parser prototype - grammar approach", ["Chen Wei", "Dana Okafor", "Bilal Haddad"],
     ["pyparsing-best-practices", "libcst-conversions", "py-operator-precedence"], "Query language parser prototype",
     "how to build the filter-language parser",
     ["The grammar is written down in BNF first and kept in the repository next to the code.",
      "The prototype uses pyparsing; a concrete-syntax-tree approach is only revisited if comments must survive a round trip.",
      "Operator precedence follows Python's: not binds tighter than and, which binds tighter than or."],
     ["Chen: BNF draft by next week.", "Bilal: collect twenty real filter expressions from the analysts."]),
    ("2024-07-02", "Shell script hardening", ["Eliot Marsh", "Ana Kovac", "Chen Wei"],
     ["mktemp", "timeout", "test"], "Shell script hardening",
     "making the cron scripts fail loudly and clean up after themselves",
     ["All scratch files are created with mktemp and removed by an EXIT trap.",
      "Every network call in a cron script is wrapped in a 5 minute time limit.",
      "Scripts check their inputs up front and exit non-zero with a message instead of carrying on."],
     ["Eliot: audit the remaining scripts.", "Ana: add the trap boilerplate to the script template."]),
    ("2024-09-10", "Dates and time zones in the report job", ["Bilal Haddad", "Dana Okafor", "Farah Nasser"],
     ["relative-dates", "date-options", "tz-rules"], "Shell script hardening",
     "the report that showed the wrong day after the clocks changed",
     ["All report cron jobs run in UTC (TZ=UTC0); local time only appears in the rendered email.",
      "The report computes 'yesterday' once at start-up and passes that date to every step.",
      "Nobody parses dates by hand in shell any more."],
     ["Bilal: set TZ in every crontab that runs a report.", "Farah: show both UTC and local time in the email footer."]),
    ("2024-10-22", "Parallel batch jobs with xargs", ["Ana Kovac", "Bilal Haddad", "Chen Wei", "Eliot Marsh"],
     ["xargs-parallel", "xargs-limits", "xargs-null"], "Shell script hardening",
     "speeding up the thumbnail batch without overloading the box",
     ["The thumbnail batch runs four jobs at a time, never more than the number of cores.",
      "File names always travel NUL-separated from find to xargs.",
      "Output from parallel jobs is written to per-job files, not interleaved on the terminal."],
     ["Chen: switch the batch to parallel mode.", "Eliot: check the batch with a directory full of nasty file names."]),
]

OPENERS = ["I checked this: ", "One thing to keep in mind: ", "Right. ", "Also, ", "From what I read, ",
           "Agreed, and ", "Quick note: ", "For the record, "]

JOURNAL = [
    ("2023-09-15", ["Backup meeting yesterday went fine, notes in [[2023-09-14 Backup compression choice]].",
                    "Read up on block sizes in [[bzip2-memory]]; the numbers are smaller than I feared.",
                    "Evening: fixed the rear brake on the bike, finally."]),
    ("2023-10-04", ["Retention rule agreed ([[2023-10-03 Retention - what gets deleted and when]]).",
                    "I still get confused by how -mtime rounds days, so re-read [[find-by-age]].",
                    "Ana is on leave next week; [[Nightly backup rotation]] waits until she is back."]),
    ("2023-11-08", ["Manifests: going with SHA-256 ([[2023-11-07 Checksums for the archive]]).",
                    "Took the afternoon off, long walk by the river."]),
    ("2024-01-17", ["Kickoff for [[Offline docs mirror]] yesterday. Farah wants it before the spring exams.",
                    "TODO: look at [[wget-recursive-options]] for the depth setting."]),
    ("2024-02-07", ["Played with the counting stage for [[Log cleanup pipeline]] — sort, count, sort again.",
                    "Surprised how much faster it gets with LC_ALL=C.",
                    "Bought new running shoes."]),
    ("2024-03-20", ["Wrote down the patch rules from [[2024-03-19 Patch review conventions]] in the repo.",
                    "Need to remember: regenerate instead of forcing a patch through."]),
    ("2024-05-15", ["[[S3 archive migration]]: dry run looked sane; Bilal is still reading the log.",
                    "Note to self: the transfer settings live in the shared config file, see [[s3-transfer-config]]."]),
    ("2024-06-05", ["Parser: BNF first, then code ([[2024-06-04 Parser prototype - grammar approach]]).",
                    "Re-read [[py-operator-precedence]]; 'not' binds tighter than I remembered.",
                    "Dinner with the neighbours."]),
    ("2024-07-03", ["Hardening session yesterday. Most scripts leak temp files — see [[mktemp]].",
                    "Kept thinking about what happens when a cron job hangs on a dead mount."]),
    ("2024-09-11", ["The report showed Sunday's numbers on Monday again. Root cause: DST + local time.",
                    "Decision in [[2024-09-10 Dates and time zones in the report job]]."]),
    ("2024-10-23", ["xargs -P works nicely; load stays under control ([[2024-10-22 Parallel batch jobs with xargs]]).",
                    "Weekend plan: clear out the garage."]),
]

# (path, title or None for no front matter, body lines)
STUBS = [
    ("Inbox/xargs parallel question.md", "xargs parallel question", ["Does -P interact with -n? See [[xargs-parallel]]."]),
    ("Inbox/numfmt in the disk report.md", "numfmt in the disk report", ["- [ ] try [[numfmt]] on the disk report"]),
    ("Inbox/grep is slow on the NFS share.md", "grep is slow on the NFS share", ["[[grep-performance]] — read later"]),
    ("Inbox/sed one-liners to collect.md", "sed one-liners to collect", ["- [ ] collect one-liners from [[sed-common-commands]]"]),
    ("Inbox/untitled.md", None, ["TODO"]),
    ("Inbox/S3 costs.md", "S3 costs", ["Ask [[Bilal Haddad]] about request costs for [[s3-sync]]."]),
    ("Inbox/wgetrc for the mirror.md", "wgetrc for the mirror", ["Copy bits from [[sample-wgetrc]]."]),
    ("Inbox/dd progress.md", "dd progress", ["status=progress? check [[dd]]"]),
    ("Inbox/pdb commands I forget.md", "pdb commands I forget", ["- [ ] write down the commands I keep forgetting → [[pdb]]"]),
    ("Inbox/inputrc tweaks.md", "inputrc tweaks", ["Try case-insensitive completion, see [[inputrc]]."]),
    ("Inbox/reading list.md", "Reading list", ["- [[software-tools-pipelines]]", "- [[version-sort]]"]),
    ("Inbox/question for Eliot.md", "Question for Eliot", ["Is [[shred]] worth anything on SSDs?"]),
    ("Inbox/prep for May review.md", "Prep for May review", ["Bring numbers for [[2024-05-14 S3 sync dry run review]]."]),
    ("Inbox/masked arrays for sensor data.md", "masked arrays for sensor data", ["Someone mentioned [[numpy-masked-arrays]]. TODO."]),
    ("Inbox/bc scale.md", "bc scale", ["scale=… see [[bc-expressions]]"]),
    ("Inbox/Untitled 1.md", None, ["- [ ] "]),
    ("Inbox/manifests.md", "manifests", ["→ [[md5sum]] --check style works for the SHA-2 tools too"]),
    ("Inbox/tz question.md", "tz question", ["UTC0 vs UTC — any difference? [[tz-rules]]"]),
    ("Inbox/libcst maybe.md", "libcst maybe", ["[[libcst-conversions]] — only if pyparsing falls short"]),
    ("Inbox/websocket thing.md", "websocket thing", ["Bookmark: [[openai-responses-websocket]]", "Not for work yet."]),
    ("Areas/Shell/Text/Viewing/fold.md", "Wrapping long lines", ["Wraps long lines at a width. TODO write up; see [[fmt]]."]),
    ("Areas/Shell/Text/Sorting/ptx.md", "ptx", ["TODO — never used it."]),
    ("Areas/Shell/System/uptime.md", "Load average", ["TODO"]),
    ("Areas/Shell/System/factor.md", None, ["prime factors of a number", "see [[seq]]"]),
    ("Areas/Shell/Scripting/true and false.md", "true and false", ["Do nothing, successfully / unsuccessfully. See [[test]]."]),
    ("Areas/Shell/Scripting/yes.md", None, ["yes | some-command  (answer every prompt)"]),
    ("Areas/Shell/Files/Links/link and unlink.md", "link and unlink", ["Raw syscall versions. See [[ln]] and [[readlink]]."]),
    ("Areas/Shell/Files/Links/mknod.md", "mknod", ["TODO"]),
    ("Areas/Python/Language/Expressions/lambda.md", "Anonymous functions", ["Single expression only. See [[py-function-def]]."]),
    ("Areas/Python/Language/Execution/naming and binding.md", "Naming and binding", ["Covered in [[py-execution-model]]."]),
    ("Areas/Python/Language/Statements/match statement.md", "Structural pattern matching", ["TODO: 3.10+, not in my notes yet."]),
    ("Areas/Shell/Editing/sed/sed examples.md", "sed examples", ["TODO: port the examples chapter.", "See [[sed-branching]] meanwhile."]),
    ("Areas/Shell/Diff/Formats/if-then-else.md", "if-then-else output", ["See [[line-group-formats]] and [[line-formats]]."]),
    ("Areas/Shell/Diff/Patch/patch and tradition.md", "patch and tradition", ["TODO"]),
    ("Areas/Networking/curl.md", "curl", ["TODO: compare with [[wget-overview]]."]),
    ("Areas/Networking/rsync.md", "rsync", ["TODO"]),
    ("Areas/Shell/Compression/xz.md", "xz", ["TODO: compare ratios with [[bzip2]] and [[gzip]]."]),
    ("Areas/Shell/Compression/zstd.md", "zstd", ["TODO"]),
    ("Areas/Shell/Search/ripgrep.md", "ripgrep", ["TODO: try it against [[grep-recursive]]."]),
    ("Areas/Shell/Readline/vi mode.md", "vi mode", ["set editing-mode vi — see [[inputrc]]"]),
    ("Areas/Python/Tools/pytest.md", "pytest", ["TODO"]),
    ("Areas/Python/Tools/virtual environments.md", "Virtual environments", ["TODO: write up."]),
    ("Areas/Shell/Calculators/dc.md", "dc", ["Reverse-polish sibling of [[bc-basics|bc]]. TODO"]),
    ("Areas/Shell/Basics/shell quoting.md", "Shell quoting", ["TODO: single vs double quotes, $'…'"]),
    ("Areas/Shell/System/cron.md", "cron", ["TODO: crontab syntax.", "Hardening notes: [[Shell script hardening]]"]),
    ("Areas/Shell/System/systemd timers.md", "systemd timers", ["TODO"]),
    ("Areas/Shell/Find/find -empty.md", None, ["-empty: see [[find-size-type-owner]]"]),
    ("Areas/Shell/Checksums/b2sum.md", "b2sum", ["Covered in [[cksum]]."]),
    ("Resources/AWS CLI/IAM policies.md", "IAM policies", ["TODO"]),
    ("Resources/AWS CLI/s3 examples/s3 website redirects.md", "s3 website redirects", ["TODO, see [[s3-website]]"]),
    ("Resources/Reading/Unix philosophy.md", "Unix philosophy", ["See [[software-tools-pipelines]]."]),
    ("Resources/Reading/Regex books.md", "Regex books", ["- [ ] find the one Eliot recommended", "Notes so far: [[findutils-regex]]"]),
    ("People/Vendor support contact.md", "Vendor support contact", ["Config vendor's support line. Details in the shared contacts sheet."]),
    ("Projects/Ideas/dashboard for disk usage.md", "dashboard for disk usage", ["Maybe: [[du]] + [[numfmt]] into a tiny web page."]),
    ("Projects/Ideas/local search over notes.md", "local search over notes", ["Idea only."]),
    ("Journal/2024-08/2024-08-19.md", "2024-08-19", ["- [ ] call the plumber", "- [ ] [[Offline docs mirror]] cron"]),
    ("Journal/2024-04/2024-04-10.md", None, ["Vendor merge done, see [[2024-04-09 Three-way merge of the vendor config]]."]),
    ("Meetings/2024/2024-08-06 Standup.md", "2024-08-06 Standup", ["Nothing decided. Skipped notes."]),
    ("Areas/Python/Language/Statements/walrus.md", "Assignment expressions", ["TODO: := — see [[py-assignment]]?"]),
    ("Areas/Shell/Files/Disk space/ncdu.md", "ncdu", ["TODO"]),
]

# --------------------------------------------------------------- site-packages docs
SITE_DOCS = [
    ("awscli/topics/config-vars.rst", "AWS CLI config file settings", "aws-config-vars", "Resources/AWS CLI"),
    ("awscli/topics/return-codes.rst", "What the aws command's exit codes mean", "aws-return-codes", "Resources/AWS CLI"),
    ("awscli/topics/s3-case-insensitivity.rst", "S3 downloads on case-insensitive filesystems", "s3-case-insensitivity", "Resources/AWS CLI"),
    ("awscli/topics/s3-config.rst", "Tuning aws s3 transfers", "s3-transfer-config", "Resources/AWS CLI"),
    ("awscli/topics/s3-faq.rst", "S3 checksum FAQ", "s3-faq", "Resources/AWS CLI"),
    ("awscli/examples/s3/_concepts.rst", "aws s3 path arguments, filters and exclusions", "s3-concepts", "Resources/AWS CLI/s3 examples"),
    ("awscli/examples/s3/cp.rst", "Copying to and from S3", "s3-cp", "Resources/AWS CLI/s3 examples"),
    ("awscli/examples/s3/sync.rst", "Syncing folders with a bucket", "s3-sync", "Resources/AWS CLI/s3 examples"),
    ("awscli/examples/s3/ls.rst", "Listing buckets and prefixes", "s3-ls", "Resources/AWS CLI/s3 examples"),
    ("awscli/examples/s3/mv.rst", "Moving objects between buckets", "s3-mv", "Resources/AWS CLI/s3 examples"),
    ("awscli/examples/s3/rm.rst", "Deleting objects from a bucket", "s3-rm", "Resources/AWS CLI/s3 examples"),
    ("awscli/examples/s3/presign.rst", "Sharing an object with a temporary link", "s3-presign", "Resources/AWS CLI/s3 examples"),
    ("awscli/examples/s3/website.rst", "Serving a static site from a bucket", "s3-website", "Resources/AWS CLI/s3 examples"),
    ("awscli/examples/s3api/put-bucket-lifecycle-configuration.rst", "Bucket lifecycle rules", "s3-lifecycle", "Resources/AWS CLI/s3 examples"),
    ("awscli/examples/s3api/put-bucket-versioning.rst", "Turning on bucket versioning", "s3-versioning", "Resources/AWS CLI/s3 examples"),
    ("awscli/examples/s3api/list-object-versions.rst", "Listing old versions of objects", "s3-object-versions", "Resources/AWS CLI/s3 examples"),
    ("boto3/examples/s3.rst", "boto3 S3 snippets", "boto3-s3", "Resources/Libraries"),
    ("boto3/examples/cloudfront.rst", "Signed CloudFront URLs from Python", "boto3-cloudfront", "Resources/Libraries"),
    ("numpy/ma/README.rst", "Masked arrays in NumPy: history and design", "numpy-masked-arrays", "Resources/Libraries"),
    ("pyparsing/ai/best_practices.md", "pyparsing best practices", "pyparsing-best-practices", "Resources/Libraries"),
    ("libcst/_parser/conversions/README.md", "How libcst turns grammar productions into nodes", "libcst-conversions", "Resources/Libraries"),
    ("openai/lib/responses_websocket/README.md", "OpenAI Responses WebSocket sessions", "openai-responses-websocket", "Resources/Libraries"),
]
# ---------------------------------------------------------------- folders
FOLDERS = {
    'coreutils': {
        'Common options': 'Areas/Shell/Basics',
        'Output of entire files': 'Areas/Shell/Text/Viewing', 'Formatting file contents': 'Areas/Shell/Text/Viewing',
        'Output of parts of files': 'Areas/Shell/Text/Viewing', 'Summarizing files': 'Areas/Shell/Checksums',
        'Operating on sorted files': 'Areas/Shell/Text/Sorting', 'Version sort ordering': 'Areas/Shell/Text/Sorting',
        'Operating on fields': 'Areas/Shell/Text/Columns', 'Operating on characters': 'Areas/Shell/Text/Characters',
        'Directory listing': 'Areas/Shell/Files/Listing', 'Basic operations': 'Areas/Shell/Files/Copying',
        'Special file types': 'Areas/Shell/Files/Links', 'Changing file attributes': 'Areas/Shell/Files/Attributes',
        'File timestamps': 'Areas/Shell/Files/Attributes', 'File space usage': 'Areas/Shell/Files/Disk space',
        'File permissions': 'Areas/Shell/Files/Permissions', 'Printing text': 'Areas/Shell/Scripting',
        'Conditions': 'Areas/Shell/Scripting', 'Redirection': 'Areas/Shell/Scripting',
        'File name manipulation': 'Areas/Shell/Scripting', 'Numeric operations': 'Areas/Shell/Scripting',
        'System context': 'Areas/Shell/Dates', 'Modified command invocation': 'Areas/Shell/System',
        'Process control': 'Areas/Shell/System', 'Date input formats': 'Areas/Shell/Dates',
        'Opening the software toolbox': 'Resources/Reading',
        '@arch invocation': 'Areas/Shell/System',
    },
    'find': {'Finding Files': 'Areas/Shell/Find', 'Actions': 'Areas/Shell/Find/Actions',
             'Reference': 'Areas/Shell/Find/Reference', 'Error Messages': 'Areas/Shell/Find/Reference',
             'Common Tasks': 'Areas/Shell/Find/Recipes', 'Worked Examples': 'Areas/Shell/Find/Recipes',
             'Security Considerations': 'Areas/Shell/Find/Security'},
    'diffutils': {'Output Formats': 'Areas/Shell/Diff/Formats', 'Comparing Three Files': 'Areas/Shell/Diff/Merging',
                  'diff3 Merging': 'Areas/Shell/Diff/Merging', 'Interactive Merging': 'Areas/Shell/Diff/Merging',
                  'Invoking diff3': 'Areas/Shell/Diff/Merging', 'Invoking sdiff': 'Areas/Shell/Diff/Merging',
                  'Merging with patch': 'Areas/Shell/Diff/Patch', 'Making Patches': 'Areas/Shell/Diff/Patch',
                  'Invoking patch': 'Areas/Shell/Diff/Patch', '*': 'Areas/Shell/Diff'},
    'sed': {'sed regular expressions': 'Areas/Shell/Editing/sed/Regex', '*': 'Areas/Shell/Editing/sed'},
    'ed': {'*': 'Areas/Shell/Editing/ed'},
    'grep': {'*': 'Areas/Shell/Search'},
    'wget': {'*': 'Areas/Networking/wget'},
    'bc': {'*': 'Areas/Shell/Calculators'},
    'bzip2': {'*': 'Areas/Shell/Compression'},
    'gzip': {'*': 'Areas/Shell/Compression'},
    'time': {'*': 'Areas/Shell/System'},
    'rluserman': {'*': 'Areas/Shell/Readline'},
}
TAGS = {  # folder -> tags
    'Areas/Shell/Basics': ['shell', 'basics'], 'Areas/Shell/Text/Viewing': ['shell', 'text'],
    'Areas/Shell/Checksums': ['shell', 'integrity'], 'Areas/Shell/Text/Sorting': ['shell', 'text', 'sorting'],
    'Areas/Shell/Text/Columns': ['shell', 'text', 'columns'], 'Areas/Shell/Text/Characters': ['shell', 'text'],
    'Areas/Shell/Files/Listing': ['shell', 'files'], 'Areas/Shell/Files/Copying': ['shell', 'files'],
    'Areas/Shell/Files/Links': ['shell', 'files', 'links'], 'Areas/Shell/Files/Attributes': ['shell', 'files'],
    'Areas/Shell/Files/Disk space': ['shell', 'disk'], 'Areas/Shell/Files/Permissions': ['shell', 'permissions'],
    'Areas/Shell/Scripting': ['shell', 'scripting'], 'Areas/Shell/Dates': ['shell', 'dates'],
    'Areas/Shell/System': ['shell', 'system'], 'Resources/Reading': ['reading'],
    'Areas/Shell/Find': ['shell', 'find'], 'Areas/Shell/Find/Actions': ['shell', 'find'],
    'Areas/Shell/Find/Reference': ['shell', 'find', 'reference'], 'Areas/Shell/Find/Recipes': ['shell', 'find', 'howto'],
    'Areas/Shell/Find/Security': ['shell', 'find', 'security'], 'Areas/Shell/Diff': ['shell', 'diff'],
    'Areas/Shell/Diff/Formats': ['shell', 'diff'], 'Areas/Shell/Diff/Merging': ['shell', 'diff', 'merge'],
    'Areas/Shell/Diff/Patch': ['shell', 'patch'], 'Areas/Shell/Editing/sed': ['shell', 'sed'],
    'Areas/Shell/Editing/sed/Regex': ['shell', 'sed', 'regex'], 'Areas/Shell/Editing/ed': ['shell', 'ed'],
    'Areas/Shell/Search': ['shell', 'grep'], 'Areas/Networking/wget': ['network', 'wget'],
    'Areas/Shell/Calculators': ['shell', 'bc'], 'Areas/Shell/Compression': ['shell', 'compression'],
    'Areas/Shell/Readline': ['shell', 'readline'],
}

# ---------------------------------------------------------------- helpers
def slug_ok(s):
    return re.sub(r'[^a-z0-9]+', '-', s.lower()).strip('-')

HEAD_LEVEL = {'*': 1, '=': 2, '-': 3, '.': 4}

def info_to_md(text, drop_first_heading=True, base=None):
    """Info node text -> Markdown lines; returns (md, base level)."""
    text = re.sub(r'\n\* Menu:.*\Z', '\n', text, flags=re.S)
    lines = text.split('\n')
    out = []
    i = 0
    first = True
    while i < len(lines):
        ln = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ''
        if (ln.strip() and not ln.startswith(' ') and len(nxt) >= 3 and len(set(nxt)) == 1
                and nxt[0] in HEAD_LEVEL and abs(len(nxt) - len(ln)) <= 3):
            lvl = HEAD_LEVEL[nxt[0]]
            title = re.sub(r'^(\d+(\.\d+)*|[A-Z](\.\d+)+)\s+', '', ln.strip())
            if base is None:
                base = lvl
            if first and drop_first_heading:
                pass
            else:
                out.append('#' * min(6, max(2, 2 + lvl - base)) + ' ' + title)
            first = False
            i += 2
            continue
        out.append(ln)
        i += 1
    md = '\n'.join(out)
    # paragraph first-line indentation
    md = re.sub(r'(^|\n\n)   (?=\S)', r'\1', md)
    md = re.sub(r'‘([^’\n]{1,60})’', r'`\1`', md)
    return md, base

XREF = re.compile(r'\*([Nn])ote\s+(?:([^:*]+?)::|([^:*]+?):\s+(\([^)]*\))?([^.,:*]+?)([.,]))', re.S)

def norm(s):
    return re.sub(r'\s+', ' ', s).strip()

def fix_xrefs(md, manual, nodemap, rng):
    def rep(m):
        see = 'See ' if m.group(1) == 'N' else 'see '
        if re.search(r'(see|See|also|Also)\s+$', md[max(0, m.start() - 6):m.start()]):
            see = ''
        if m.group(2) is not None:
            target, label, ext, tail = norm(m.group(2)), norm(m.group(2)), None, ''
        else:
            label, ext, target, tail = norm(m.group(3)), m.group(4), norm(m.group(5)), m.group(6)
        if ext and ext.strip('()') not in (manual, manual + '.info'):
            return see + '“' + label + '” in the ' + ext.strip('()') + ' manual' + tail
        stem = nodemap.get((manual, target))
        if stem is None:
            return see + '“' + label + '”' + tail
        if rng.random() < 0.5 or label.lower() == stem:
            return see + '[[' + stem + ']]' + tail
        return see + '[[' + stem + '|' + label + ']]' + tail
    return XREF.sub(rep, md)

def rst_to_md(text):
    lines = text.split('\n')
    # drop field list header (:title: etc.)
    while lines and (lines[0].startswith(':') or not lines[0].strip()):
        lines.pop(0)
    out, order, i = [], [], 0
    while i < len(lines):
        ln = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ''
        # overline + title + underline
        if re.fullmatch(r'([=\-~^+*#])\1{2,}', ln) and i + 2 < len(lines) and lines[i + 2] == ln and lines[i + 1].strip():
            key = ln[0] + 'o'
            if key not in order:
                order.append(key)
            out.append('#' * (order.index(key) + 1) + ' ' + lines[i + 1].strip())
            i += 3
            continue
        if ln.strip() and re.fullmatch(r'([=\-~^+*#"])\1{2,}', nxt) and len(nxt) >= len(ln.rstrip()) - 2:
            key = nxt[0]
            if key not in order:
                order.append(key)
            out.append('#' * min(6, order.index(key) + 1) + ' ' + ln.strip())
            i += 2
            continue
        if re.match(r'\s*\.\. (code-block|code|highlight)::', ln) or re.match(r'\s*\.\. [Cc]ontents::', ln):
            i += 1
            continue
        m = re.match(r'(\s*)\.\. (note|warning|tip|important)::\s*(.*)', ln)
        if m:
            out.append(m.group(1) + '**' + m.group(2).capitalize() + ':** ' + m.group(3))
            i += 1
            continue
        out.append(ln)
        i += 1
    md = '\n'.join(out)
    md = re.sub(r'``([^`]+)``', r'`\1`', md)
    md = re.sub(r'`([^`<]+?)\s*<([^>]+)>`__?', r'[\1](\2)', md)
    md = re.sub(r'(\S)::\s*$', r'\1:', md, flags=re.M)
    md = re.sub(r'^::\s*$', '', md, flags=re.M)
    return md

def pydoc_to_md(text):
    md, _ = info_to_md(text, drop_first_heading=True)
    return md

def cap(text, limit):
    if len(text) <= limit:
        return text
    cut = text.rfind('\n\n', 0, limit)
    return text[:cut if cut > limit // 2 else limit].rstrip() + '\n'

def sentences(md):
    """Plain prose sentences of a note (no code, no headings), for meeting turns."""
    out = []
    for para in re.split(r'\n\s*\n', md):
        para = para.strip('\n')
        lines = para.split('\n')
        k = 0
        while k < len(lines) and lines[k].startswith('`'):
            k += 1
        if 0 < k < len(lines) and all(l.startswith('     ') for l in lines[k:]):
            para = '\n'.join(lines[k:])
        elif para.startswith(('    ', '#', '|', '-', '*', '>')) or '[[' in para:
            continue
        p = ' '.join(para.split())
        for s in re.split(r'(?<=[.!?])\s+(?=[A-Z`])', p):
            if 50 <= len(s) <= 240 and (s[0].isupper() or s[0] == '`') and s.endswith('.') and s.count('`') % 2 == 0:
                out.append(s)
    return out
# ---------------------------------------------------------------- build
ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'
CAP = 16000

class Note:
    def __init__(self, path, title, body, kind, tags=None, aliases=None, fm=True, created=None, extra=None):
        self.path, self.title, self.body, self.kind = path, title, body, kind
        self.tags, self.aliases, self.fm = tags or [], aliases or [], fm
        self.created, self.extra = created, extra or {}
        self.stem = path.rsplit('/', 1)[-1][:-3]
        self.updated = None
        self.id = None

def rand_date(rng, lo=date(2022, 1, 10), hi=date(2024, 10, 31)):
    return lo + timedelta(days=rng.randrange((hi - lo).days + 1))

def info_units(base):
    cfg = MANUALS[base]
    ns = load_info(base)
    byname = {n['name']: n for n in ns}
    kids = {}
    for n in ns:
        if n['name'] in cfg['skipnodes']:
            continue
        kids.setdefault(n['up'], []).append(n['name'])
    def size(x):
        return len(byname[x]['text']) + sum(size(k) for k in kids.get(x, []))
    res = []
    def walk(x, chapter):
        if x in cfg['long'] or size(x) <= UNIT_MAX or not kids.get(x):
            res.append([chapter, byname[x]['up'], [(x, True)], size(x)])
            return
        if len(byname[x]['text']) > 1500:
            res.append([chapter, byname[x]['up'], [(x, False)], len(byname[x]['text'])])
        for k in kids[x]:
            walk(k, chapter)
    for c in kids.get('Top', []):
        if c in SKIP or c in cfg['skip']:
            continue
        walk(c, c)
    out = []
    for u in res:
        if (out and out[-1][1] == u[1] and (u[3] < 2200 or out[-1][3] < 2200) and out[-1][3] + u[3] < 6000
                and u[2][0][0] not in cfg['long'] and out[-1][2][0][0] not in cfg['long']):
            out[-1][2] += u[2]
            out[-1][3] += u[3]
        else:
            out.append(u)
    return out, byname, kids

def build(rng):
    notes = []
    # ---- info manuals
    nodemap = {}
    pending = []
    for base in MANUALS:
        units, byname, kids = info_units(base)
        for chapter, up, comps, size in units:
            key = (base, comps[0][0])
            title, stem = TITLES.get(key, (None, None))
            if not title:
                continue
            fmap = FOLDERS[base]
            folder = fmap.get('@' + comps[0][0]) or fmap.get(chapter) or fmap['*']
            raw, members = [], []
            def collect(x, whole):
                members.append(x)
                raw.append(re.sub(r'\n\* Menu:.*\Z', '\n', byname[x]['text'], flags=re.S))
                if whole:
                    for k in kids.get(x, []):
                        collect(k, True)
            for x, whole in comps:
                collect(x, whole)
            for m in members:
                nodemap[(base, m)] = stem
            pending.append((base, comps, folder, title, stem, '\n'.join(raw), comps[0][0] in MANUALS[base]['long']))
    for base, comps, folder, title, stem, raw, is_long in pending:
        md, _ = info_to_md(raw)
        md = fix_xrefs(md, base, nodemap, rng)
        md = re.sub(r'\n{3,}', '\n\n', md).strip() + '\n'
        if not is_long:
            md = cap(md, CAP)
        first = comps[0][0]
        aliases = []
        if first.endswith(' invocation') and rng.random() < 0.5:
            aliases = [first[:-len(' invocation')]]
        elif rng.random() < 0.15:
            aliases = [first.lower()]
        n = Note(f'{folder}/{stem}.md', title, md, 'info', tags=TAGS[folder] + [base], aliases=aliases)
        n.extra['source'] = f"info {base} '{first}'"
        n.extra['long'] = is_long
        notes.append(n)
    # ---- Python language reference
    topics = pydoc_data.topics.topics
    for keys, title, stem, sub in PY_GROUPS:
        if not title:
            continue
        parts = []
        for i, k in enumerate(keys):
            md = pydoc_to_md(topics[k])
            if i > 0:
                head = topics[k].split('\n', 1)[0].strip()
                md = '## ' + head + '\n\n' + md
            parts.append(md.strip())
        md = '\n\n'.join(parts) + '\n'
        is_long = keys[0] in ('types', 'formatstrings')
        if not is_long:
            md = cap(md, CAP)
        folder = 'Areas/Python/Language/' + sub if sub else 'Areas/Python/Tools'
        aliases = [keys[0]] if rng.random() < 0.3 and keys[0].isalpha() else []
        n = Note(f'{folder}/{stem}.md', title, md, 'py', tags=['python', (sub or 'tools').lower().replace(' ', '-')],
                 aliases=aliases)
        n.extra['source'] = 'Python language reference: ' + ', '.join(keys)
        n.extra['long'] = is_long
        notes.append(n)
    # ---- site-packages docs
    for rel, title, stem, folder in SITE_DOCS:
        p = Path(SITE) / rel
        text = p.read_text(encoding='utf-8', errors='replace')
        if rel.endswith('.rst'):
            md = rst_to_md(text)
        else:
            md = re.sub(r'<!--.*?-->\s*', '', text, flags=re.S)
        md = cap(re.sub(r'\n{3,}', '\n\n', md).strip() + '\n', CAP)
        tags = ['aws', 's3'] if 'awscli' in rel or 'boto3' in rel else ['python', 'library']
        n = Note(f'{folder}/{stem}.md', title, md, 'site', tags=tags)
        n.extra['source'] = rel.split('/')[0] + ' package docs'
        notes.append(n)
    by_stem = {n.stem: n for n in notes}
    # ---- projects
    for name, status, goal, refs, meets, people, tasks in PROJECTS:
        body = [f'# {name}', '', f'Status: **{status}**', '', '## Goal', '', goal, '', '## Background notes', '']
        body += [f'- [[{r}|{by_stem[r].title}]]' if rng.random() < 0.5 else f'- [[{r}]]' for r in refs]
        body += ['', '## Meetings', ''] + [f'- [[{m}]]' for m in meets]
        body += ['', '## People', ''] + [f'- [[{p}]]' for p in people]
        body += ['', '## Tasks', ''] + tasks
        n = Note(f'Projects/{name}.md', name, '\n'.join(body) + '\n', 'project', tags=['project', status],
                 created=date.fromisoformat(min(meets)[:10]) - timedelta(days=rng.randint(5, 40)))
        n.extra['status'] = status
        notes.append(n)
    # ---- people
    for name, blurb, tags in PEOPLE:
        meets = [m for m in MEETINGS if name in m[2]]
        projs = [p[0] for p in PROJECTS if name in p[5]]
        body = [f'# {name}', '', blurb, '']
        if projs:
            body += ['## Projects', ''] + [f'- [[{p}]]' for p in projs] + ['']
        if meets:
            body += ['## Meetings', ''] + [f'- [[{m[0]} {m[1]}]]' for m in meets]
        notes.append(Note(f'People/{name}.md', name, '\n'.join(body) + '\n', 'person', tags=['person'] + tags))
    # ---- meetings
    for day, title, att, srcs, proj, agenda, decisions, actions in MEETINGS:
        first = {a: a.split()[0] for a in att}
        chair = att[0]
        turns = [f'**{first[chair]}:** Let\'s start. Today: {agenda}.']
        prev = chair
        for si, s in enumerate(srcs):
            sents = sentences(by_stem[s].body)
            k = min(len(sents), rng.randint(4, 6))
            picked = sorted(rng.sample(range(len(sents)), k))
            for j in picked:
                sp = rng.choice([a for a in att if a != prev])
                sent = sents[j]
                if rng.random() < 0.3:
                    op = rng.choice(OPENERS)
                    if op.endswith(', ') and len(sent) > 1 and sent[1].islower():
                        sent = sent[0].lower() + sent[1:]
                    sent = op + sent
                turns.append(f'**{first[sp]}:** {sent}')
                prev = sp
            if si < len(srcs) - 1 and picked:
                sp = rng.choice([a for a in att if a != prev])
                turns.append(f'**{first[sp]}:** What does that mean for the {proj[0].lower() + proj[1:]}?')
                prev = sp
        turns.append(f'**{first[chair]}:** Good. Let me write down what we agreed.')
        body = [f'# {title}', '', f'Date: {day}  ', 'Attendees: ' + ', '.join(f'[[{a}]]' for a in att) + '  ',
                f'Project: [[{proj}]]  ', 'Background: ' + ', '.join(f'[[{s}]]' for s in srcs), '',
                '## Transcript', ''] + [t + '\n' for t in turns]
        body += ['## Decisions', ''] + [f'- {d}' for d in decisions]
        body += ['', '## Action items', ''] + [f'- [ ] {a}' for a in actions]
        d = date.fromisoformat(day)
        n = Note(f'Meetings/{day[:4]}/{day} {title}.md', f'{title} ({day})', '\n'.join(body) + '\n', 'meeting',
                 tags=['meeting', slug_ok(proj)], created=d)
        n.extra['attendees'] = att
        notes.append(n)
    # ---- journal
    for day, lines in JOURNAL:
        d = date.fromisoformat(day)
        body = '\n'.join([f'# {d.strftime("%A %d %B %Y")}', ''] + [f'- {l}' for l in lines]) + '\n'
        notes.append(Note(f'Journal/{day[:7]}/{day}.md', day, body, 'journal', tags=['daily'], created=d,
                          fm=rng.random() < 0.8))
    # ---- stubs
    for path, title, lines in STUBS:
        tags = ['inbox'] if path.startswith('Inbox/') else ['stub']
        n = Note(path, title or path.rsplit('/', 1)[-1][:-3], '\n'.join(lines) + '\n', 'stub', tags=tags,
                 fm=title is not None)
        if path.startswith('Journal/'):
            n.created = date.fromisoformat(n.stem)
        notes.append(n)
    # ---- related links between neighbours in the same folder
    by_folder = {}
    for n in notes:
        if n.kind in ('info', 'py', 'site'):
            by_folder.setdefault(n.path.rsplit('/', 1)[0], []).append(n)
    for folder, group in by_folder.items():
        for i, n in enumerate(group):
            if rng.random() < 0.4 and len(group) > 1:
                nb = [group[j] for j in (i - 1, i + 1) if 0 <= j < len(group)]
                n.body += '\nRelated: ' + ' · '.join(f'[[{x.stem}]]' for x in nb) + '\n'
    # ---- MOCs
    mocs = [('Areas/Shell/Shell MOC.md', 'Shell MOC', ['Areas/Shell/Basics', 'Areas/Shell/Scripting', 'Areas/Shell/System',
             'Areas/Shell/Dates', 'Areas/Shell/Checksums', 'Areas/Shell/Compression', 'Areas/Shell/Search',
             'Areas/Shell/Calculators', 'Areas/Shell/Readline']),
            ('Areas/Shell/Text/Text MOC.md', 'Text processing MOC', ['Areas/Shell/Text']),
            ('Areas/Shell/Files/Files MOC.md', 'Files MOC', ['Areas/Shell/Files']),
            ('Areas/Shell/Find/Find MOC.md', 'find and xargs MOC', ['Areas/Shell/Find']),
            ('Areas/Shell/Diff/Diff and patch MOC.md', 'Diff and patch MOC', ['Areas/Shell/Diff']),
            ('Areas/Shell/Editing/Editing MOC.md', 'Editors MOC', ['Areas/Shell/Editing']),
            ('Areas/Python/Python MOC.md', 'Python MOC', ['Areas/Python']),
            ('Areas/Networking/Networking MOC.md', 'Networking MOC', ['Areas/Networking']),
            ('Resources/Resources MOC.md', 'Resources MOC', ['Resources'])]
    content_notes = [n for n in notes if n.kind in ('info', 'py', 'site', 'stub')]
    for path, title, prefixes in mocs:
        body = [f'# {title}', '']
        for pre in prefixes:
            members = [n for n in content_notes if n.path.startswith(pre + '/')]
            groups = {}
            for n in members:
                groups.setdefault(n.path.rsplit('/', 1)[0], []).append(n)
            for g in sorted(groups):
                body += ['', f'## {g.split("/", 1)[1]}', '']
                body += [f'- [[{n.stem}]] — {n.title}' if n.fm else f'- [[{n.stem}]]' for n in groups[g]]
        notes.append(Note(path, title, '\n'.join(body).replace('\n\n\n', '\n\n') + '\n', 'moc', tags=['moc']))
    home = ['# Home', '', '## Maps', ''] + [f'- [[{p.rsplit("/", 1)[1][:-3]}]]' for p, _, _ in mocs]
    home += ['', '## Projects', ''] + [f'- [[{p[0]}]] ({p[1]})' for p in PROJECTS]
    home += ['', '## People', ''] + [f'- [[{p[0]}]]' for p in PEOPLE]
    notes.append(Note('Home.md', 'Home', '\n'.join(home) + '\n', 'moc', tags=['moc']))
    # ---- a few imported notes without front matter
    cands = [n for n in notes if n.kind in ('info', 'py') and not n.extra.get('long')]
    for n in rng.sample(cands, 12):
        n.fm = False
        n.title = n.stem
    return notes

def finish(notes, rng):
    stems = {}
    for n in notes:
        assert n.stem not in stems, ('duplicate stem', n.stem, n.path, stems.get(n.stem))
        stems[n.stem] = n
    # ids, dates
    for n in notes:
        n.id = ''.join(rng.choice(ID_ALPHABET) for _ in range(21))
        if n.created is None:
            n.created = rand_date(rng)
        n.updated = min(n.created + timedelta(days=rng.choice([0, 0, 1, 3, 12, 40, 95, 210])), date(2024, 11, 15))
    # link graph
    inbound, dangling = {}, set()
    for n in notes:
        for t in re.findall(r'\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]', n.body):
            t = t.strip()
            if t in stems:
                if t != n.stem:
                    inbound.setdefault(t, [])
                    if n.stem not in inbound[t]:
                        inbound[t].append(n.stem)
            else:
                dangling.add(t)
    for n in notes:
        src = inbound.get(n.stem, [])
        if n.kind in ('stub', 'moc') or not src:
            continue
        if rng.random() < 0.4:
            src = sorted(s for s in src if stems[s].kind != 'moc')[:8]
            if src:
                n.body = n.body.rstrip('\n') + '\n\n## Backlinks\n\n' + '\n'.join(f'- [[{s}]]' for s in src) + '\n'
    return sorted(dangling)

def yaml_str(s):
    if re.search(r'[:#\[\]{},&*!|>\'"%@`]', s) or s != s.strip():
        return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'
    return s

def render(n, rng):
    parts = []
    if n.fm:
        fm = ['---', f'id: {n.id}', f'title: {yaml_str(n.title)}', f'created: {n.created.isoformat()}',
              f'updated: {n.updated.isoformat()}']
        if rng.random() < 0.7:
            fm.append('tags: [' + ', '.join(n.tags) + ']')
        else:
            fm.append('tags:')
            fm += [f'  - {t}' for t in n.tags]
        if n.aliases:
            fm.append('aliases: [' + ', '.join(yaml_str(a) for a in n.aliases) + ']')
        if n.kind == 'meeting':
            fm.append('type: meeting')
            fm.append('attendees: [' + ', '.join(n.extra['attendees']) + ']')
        if n.kind == 'project':
            fm.append(f"status: {n.extra['status']}")
        fm.append('---')
        parts.append('\n'.join(fm) + '\n')
    body = n.body
    if n.kind in ('info', 'py', 'site'):
        head = ''
        if n.fm and rng.random() < 0.4:
            head += f'# {n.title}\n\n'
        if rng.random() < 0.5:
            head += f"> Source: {n.extra['source']}\n\n"
        body = head + body
    parts.append(body)
    return '\n'.join(parts) if n.fm else body

def main():
    if len(sys.argv) != 2:
        sys.exit('usage: make_vault2.py OUT_DIR')
    out = Path(sys.argv[1])
    rng = random.Random(SEED)
    notes = build(rng)
    dangling = finish(notes, rng)
    if out.exists():
        for p in sorted(out.rglob('*.md'), reverse=True):
            p.unlink()
        for d in sorted((p for p in out.rglob('*') if p.is_dir()), key=lambda p: -len(p.parts)):
            if not any(d.iterdir()):
                d.rmdir()
    h = hashlib.sha256()
    for n in sorted(notes, key=lambda n: n.path):
        text = render(n, rng)
        p = out / n.path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding='utf-8')
        h.update(n.path.encode() + b'\n' + text.encode() + b'\0')
    kinds = {}
    for n in notes:
        kinds[n.kind] = kinds.get(n.kind, 0) + 1
    sizes = [len((out / n.path).read_bytes()) for n in notes]
    print(f'notes: {len(notes)}  kinds: {kinds}')
    print(f'front matter: {sum(n.fm for n in notes)}/{len(notes)}  over 20KB: {sum(s > 20480 for s in sizes)}'
          f'  stubs (<=3 lines of body): {sum(n.kind == "stub" for n in notes)}')
    if dangling:
        print('dangling links:', ', '.join(dangling))
    print('digest:', h.hexdigest()[:16])

if __name__ == '__main__':
    main()
