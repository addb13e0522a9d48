using System.Globalization;
using System.Text;
using Microsoft.Extensions.Logging;

namespace Courier.Gateway.Logging;

/// <summary>
/// Where log lines go, in nats-server's format (logger/log.go):
/// <c>[pid] yyyy/MM/dd HH:mm:ss.ffffff [INF] message</c>, the time only with <c>logtime</c>. Without a
/// log file the lines go to stderr, as nats-server's; with one (<c>-l</c>, <c>logfile</c>) they are
/// appended to it, rotated past <c>logfile_size_limit</c> to <c>&lt;file&gt;.yyyy.MM.dd.HH.mm.ss.nnnnnnnnn</c>,
/// and reopened on SIGUSR1 (logrotate moves the file, then signals).
/// </summary>
/// <remarks>One lock serializes whole lines; logging is off the message path (trace aside).</remarks>
internal sealed class NatsLogSink : IDisposable
{
    private readonly Lock _gate = new();
    private readonly string _pidPrefix = $"[{Environment.ProcessId}] ";
    private Stream _output;
    private string? _path;
    private bool _logtime;
    private long _limit;
    private long _written;
    private volatile int _minLevel;

    /// <summary>Opens <paramref name="path"/> (created if missing) or uses stderr when it is null.</summary>
    /// <exception cref="IOException">The log file cannot be opened.</exception>
    /// <exception cref="UnauthorizedAccessException">The log file cannot be opened.</exception>
    public NatsLogSink(string? path, bool logtime, long sizeLimit, LogLevel minLevel)
    {
        _path = path;
        _logtime = logtime;
        _limit = sizeLimit;
        _minLevel = (int)minLevel;
        _output = path is null ? Console.OpenStandardError() : Open(path);
        _written = _output is FileStream file ? file.Length : 0;
    }

    /// <summary>The lowest level written (<c>-D</c>: Debug, <c>-V</c>: Trace, else Information).</summary>
    public LogLevel MinLevel
    {
        get => (LogLevel)_minLevel;
        set => _minLevel = (int)value;
    }

    /// <summary>The log file, or null for stderr.</summary>
    public string? Path
    {
        get
        {
            lock (_gate)
            {
                return _path;
            }
        }
    }

    /// <summary>The level <paramref name="debug"/> and <paramref name="trace"/> select, as nats-server's flags.</summary>
    public static LogLevel LevelFor(bool debug, bool trace) =>
        trace ? LogLevel.Trace : debug ? LogLevel.Debug : LogLevel.Information;

    /// <summary>Writes one line with <paramref name="level"/>'s label.</summary>
    public void Write(LogLevel level, string message)
    {
        lock (_gate)
        {
            var n = WriteLine(Label(level), message, "\n");
            _written += n;
            if (_limit > 0 && _written > _limit && _path is { } path)
            {
                Rotate(path);
            }
        }
    }

    /// <summary>
    /// SIGUSR1: closes and reopens the log file at its configured path (after logrotate moved it).
    /// Returns false when logging goes to stderr.
    /// </summary>
    public bool Reopen()
    {
        lock (_gate)
        {
            if (_path is not { } path)
            {
                return false;
            }

            var fresh = Open(path);
            _output.Dispose();
            _output = fresh;
            _written = fresh.Length;
            return true;
        }
    }

    /// <summary>Applies reloaded logging options: the file (null: stderr), timestamps and size limit.</summary>
    public void Reconfigure(string? path, bool logtime, long sizeLimit)
    {
        lock (_gate)
        {
            if (path != _path)
            {
                var fresh = path is null ? Console.OpenStandardError() : Open(path);
                _output.Dispose();
                _output = fresh;
                _path = path;
                _written = fresh is FileStream file ? file.Length : 0;
            }

            _logtime = logtime;
            _limit = sizeLimit;
        }
    }

    public void Dispose()
    {
        lock (_gate)
        {
            _output.Dispose();
        }
    }

    private void Rotate(string path)
    {
        // nats-server's fileLogger.Write: close, rename to <file>.<local time with nanoseconds>, reopen,
        // and start the new file with the backup's name.
        _output.Dispose();
        var now = DateTime.Now;
        var nanoseconds = (now.Ticks % TimeSpan.TicksPerSecond) * 100; // a tick is 100 ns
        var backup = string.Create(CultureInfo.InvariantCulture, $"{path}.{now:yyyy.MM.dd.HH.mm.ss}.{nanoseconds:D9}");
        File.Move(path, backup);
        _output = Open(path);
        _written = WriteLine("[INF] ", $"Rotated log, backup saved as \"{backup}\"", "\r\n");
    }

    private int WriteLine(string label, string message, string end)
    {
        var line = new StringBuilder(_pidPrefix.Length + 27 + label.Length + message.Length + 2).Append(_pidPrefix); // 27: the timestamp
        if (_logtime)
        {
            line.Append(DateTime.Now.ToString("yyyy/MM/dd HH:mm:ss.ffffff ", CultureInfo.InvariantCulture));
        }

        line.Append(label).Append(message).Append(end);
        var bytes = Encoding.UTF8.GetBytes(line.ToString());
        try
        {
            _output.Write(bytes);
            _output.Flush();
        }
        catch (IOException)
        {
            // A full disk or a closed stderr must not take the server down.
        }

        return bytes.Length;
    }

    private static string Label(LogLevel level) => level switch
    {
        LogLevel.Trace => "[TRC] ",
        LogLevel.Debug => "[DBG] ",
        LogLevel.Information => "[INF] ",
        LogLevel.Warning => "[WRN] ",
        LogLevel.Error => "[ERR] ",
        _ => "[FTL] ",
    };

    private static FileStream Open(string path) =>
        new(path, FileMode.Append, FileAccess.Write, FileShare.ReadWrite | FileShare.Delete);
}
