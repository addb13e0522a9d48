using System.Diagnostics;

namespace Courier.Integration.Tests.Infrastructure;

/// <summary>The last lines a child process wrote to stdout and stderr, for failure messages.</summary>
public sealed class ProcessLog
{
    private const int MaxLines = 2000; // lines kept; older ones are dropped

    private readonly Queue<string> _lines = new();
    private readonly Lock _gate = new();

    /// <summary>Starts capturing both streams of <paramref name="process"/> (before it is started).</summary>
    public void Attach(Process process)
    {
        process.StartInfo.RedirectStandardOutput = true;
        process.StartInfo.RedirectStandardError = true;
        process.OutputDataReceived += (_, e) => Add("out", e.Data);
        process.ErrorDataReceived += (_, e) => Add("err", e.Data);
    }

    /// <summary>Begins the asynchronous reads; call right after <see cref="Process.Start()"/>.</summary>
    public static void BeginReading(Process process)
    {
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
    }

    /// <summary>The last <paramref name="count"/> lines, oldest first, one per line.</summary>
    public string Tail(int count = 40)
    {
        lock (_gate)
        {
            return string.Join('\n', _lines.Skip(Math.Max(0, _lines.Count - count)));
        }
    }

    /// <summary>All kept lines.</summary>
    public string All() => Tail(MaxLines);

    private void Add(string stream, string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (_gate)
        {
            _lines.Enqueue($"[{stream}] {line}");
            while (_lines.Count > MaxLines)
            {
                _lines.Dequeue();
            }
        }
    }
}
