from django.shortcuts import render


def registry(request):
    return render(request, "metrics/registry.html", {"definitions": []})
