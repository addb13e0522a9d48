using System.Reflection;

namespace Courier.Integration.Tests.Infrastructure;

/// <summary>Where things are in the source tree, found from the test assembly's location.</summary>
public static class RepositoryLayout
{
    private static readonly Lazy<string> LazyRoot = new(FindRoot);

    /// <summary>The folder that holds Courier.slnx.</summary>
    public static string Root => LazyRoot.Value;

    /// <summary>The nats.js scripts project (package.json, scripts/*.mjs).</summary>
    public static string JsDirectory => Path.Combine(Root, "tests", "Courier.Integration.Tests", "js");

    /// <summary>The build configuration of this test assembly (Debug or Release), so the tests
    /// run the courier that was built alongside them.</summary>
    public static string Configuration =>
        typeof(RepositoryLayout).Assembly.GetCustomAttribute<AssemblyConfigurationAttribute>()?.Configuration
        ?? new DirectoryInfo(AppContext.BaseDirectory).Parent?.Name
        ?? "Debug";

    /// <summary>
    /// The courier executable built by src/Gateway for <see cref="Configuration"/>: the precompiled
    /// (ReadyToRun) copy a Release build writes to r2r/, as users run it, else the plain build output.
    /// </summary>
    public static string CourierDll
    {
        get
        {
            var output = Path.Combine(Root, "src", "Gateway", "bin", Configuration, "net10.0");
            var precompiled = Path.Combine(output, "r2r", "courier.dll");
            return File.Exists(precompiled) ? precompiled : Path.Combine(output, "courier.dll");
        }
    }

    private static string FindRoot()
    {
        var dir = new DirectoryInfo(AppContext.BaseDirectory);
        for (var depth = 0; dir is not null && depth < 32; depth++, dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "Courier.slnx")))
            {
                return dir.FullName;
            }
        }

        throw new InvalidOperationException(
            $"Courier.slnx not found in any parent of {AppContext.BaseDirectory}; run the tests from the repository.");
    }
}
