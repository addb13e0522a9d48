namespace Courier.Gateway.Tests.Configuration;

/// <summary>A throw-away directory for config files, deleted on dispose.</summary>
internal sealed class TempConfigDirectory : IDisposable
{
    public TempConfigDirectory()
    {
        Path = System.IO.Path.Combine(System.IO.Path.GetTempPath(), "courier-config-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(Path);
    }

    public string Path { get; }

    /// <summary>Writes <paramref name="text"/> to <paramref name="name"/> (sub-directories created) and returns the full path.</summary>
    public string Write(string name, string text)
    {
        var file = System.IO.Path.Combine(Path, name);
        Directory.CreateDirectory(System.IO.Path.GetDirectoryName(file)!);
        File.WriteAllText(file, text);
        return file;
    }

    public void Dispose()
    {
        try
        {
            Directory.Delete(Path, recursive: true);
        }
        catch (IOException)
        {
            // Best effort: a leftover temp directory is harmless.
        }
    }
}
