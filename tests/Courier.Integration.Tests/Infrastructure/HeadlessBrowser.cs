using System.Diagnostics;
using System.Net;
using System.Text;
using Courier.Testing;

namespace Courier.Integration.Tests.Infrastructure;

/// <summary>
/// Opens a page in headless Chromium (Debian's <c>chromium</c>) and waits for the page to report
/// its result. The page and its scripts are served from a loopback HTTP listener owned by the test;
/// the page reports by requesting <c>/result?s=...</c>. The browser is killed by its process id.
/// </summary>
public sealed class HeadlessBrowser : IAsyncDisposable
{
    private static readonly TimeSpan ResultTimeout = TimeSpan.FromSeconds(60); // chromium's cold start is slow on 2 cores

    private readonly HttpListener _http = new();
    private readonly Dictionary<string, (string Type, byte[] Body)> _files = new(StringComparer.Ordinal);
    private readonly TaskCompletionSource<string> _result = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly string _profile = Directory.CreateTempSubdirectory("courier-chromium-").FullName;
    private readonly ProcessLog _log = new();
    private Process? _browser;
    private Task _serve = Task.CompletedTask;
    private int _port;

    /// <summary>Serves <paramref name="body"/> at <paramref name="path"/>.</summary>
    public void Serve(string path, string type, byte[] body) => _files[path] = (type, body);

    /// <summary>Serves the page at <paramref name="path"/>, opens it, and returns what it reported.</summary>
    public async Task<string> RunAsync(string path, string query = "")
    {
        var executable = new[] { "/usr/bin/chromium", "/usr/bin/chromium-browser" }.FirstOrDefault(File.Exists);
        if (executable is null)
        {
            Assert.Fail("chromium is not installed: apt-get install chromium (test.sh installs it)");
        }

        _port = LoopbackPorts.Next();
        _http.Prefixes.Add($"http://127.0.0.1:{_port}/");
        _http.Start();
        _serve = Task.Run(ServeAsync);

        var url = $"http://127.0.0.1:{_port}{path}{query}";
        var startInfo = new ProcessStartInfo(executable,
        [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--no-default-browser-check", "--disable-extensions", $"--user-data-dir={_profile}", url,
        ])
        {
            UseShellExecute = false,
        };
        _browser = new Process { StartInfo = startInfo };
        _log.Attach(_browser);
        _browser.Start();
        ProcessLog.BeginReading(_browser);

        var finished = await Task.WhenAny(_result.Task, Task.Delay(ResultTimeout));
        if (finished != _result.Task)
        {
            Assert.Fail($"the page reported nothing within {ResultTimeout.TotalSeconds} s\n--- chromium ---\n{_log.Tail(40)}");
        }

        return await _result.Task;
    }

    private async Task ServeAsync()
    {
        while (_http.IsListening)
        {
            HttpListenerContext context;
            try
            {
                context = await _http.GetContextAsync();
            }
            catch (Exception e) when (e is HttpListenerException or ObjectDisposedException or InvalidOperationException)
            {
                return;
            }

            var path = context.Request.Url!.AbsolutePath;
            if (path == "/result")
            {
                _result.TrySetResult(context.Request.QueryString["s"] ?? "");
                context.Response.StatusCode = 204;
            }
            else if (_files.TryGetValue(path, out var file))
            {
                context.Response.ContentType = file.Type;
                await context.Response.OutputStream.WriteAsync(file.Body);
            }
            else
            {
                context.Response.StatusCode = 404;
            }

            context.Response.Close();
        }
    }


    public async ValueTask DisposeAsync()
    {
        if (_browser is not null)
        {
            try
            {
                if (!_browser.HasExited)
                {
                    _browser.Kill(entireProcessTree: true);
                }

                using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(10));
                await _browser.WaitForExitAsync(cts.Token);
            }
            catch (Exception e) when (e is InvalidOperationException or OperationCanceledException)
            {
            }

            _browser.Dispose();
        }

        if (_http.IsListening)
        {
            _http.Stop();
        }

        _http.Close();
        await _serve;
        try
        {
            Directory.Delete(_profile, recursive: true);
        }
        catch (IOException)
        {
            // Chromium may still be releasing its profile files; the temp folder is the OS's to clean.
        }
    }

    /// <summary>UTF-8 bytes of <paramref name="text"/>.</summary>
    public static byte[] Utf8(string text) => Encoding.UTF8.GetBytes(text);
}
